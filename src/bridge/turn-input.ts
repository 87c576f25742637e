/**
 * OpenAI request → the parts of a backend turn the bridge can decide on its own (messages, tools, reasoning),
 * plus warnings for what Cursor cannot honour (house-style §4: unsupported parameters warn, never fail).
 * The server adds `model` (after alias resolution) and `conversationId` to build the TurnRequest.
 */
import type { ClientTool, HistoryMessage, JsonValue, ReasoningEffort } from "../backend/types.js";
import type { ChatCompletionRequest, ChatMessage, ChatTool } from "../openai/chat-request.js";

/** What {@link toTurnInput} derives from a validated request. */
export interface TurnInput {
  /** The conversation, normalised: system+developer → system, text parts joined with "\n", content null → "". */
  messages: HistoryMessage[];
  /** Tools to offer the model; empty when `tool_choice` is "none". */
  tools: ClientTool[];
  /** Whether thinking was requested (false only for `reasoning_effort: "none"`). */
  reasoning: boolean;
  /** The requested effort mapped onto the backend's scale (minimal → low, xhigh → high); undefined when unset. */
  reasoningEffort: ReasoningEffort | undefined;
  /** `stream: true`. */
  stream: boolean;
  /** `stream_options.include_usage: true`. */
  includeUsage: boolean;
  /**
   * An instruction the server may add as a system message when `tool_choice` forces a call, which Cursor cannot
   * enforce. Kept out of `messages` so history fingerprints stay independent of it.
   */
  systemHint: string | undefined;
  /** Human-readable notes about requested behaviour that is not (or only approximately) honoured. */
  warnings: string[];
}

const DEFAULT_INPUT_SCHEMA: { [key: string]: JsonValue } = { type: "object", properties: {} };

type ContentPart = { type: "text"; text: string } | { type: "refusal"; refusal: string };

/** Joins text (and refusal) parts; a plain string is returned as is, `null`/absent becomes "". */
function contentText(content: string | readonly ContentPart[] | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : part.refusal)).join("\n");
}

/** One OpenAI message → one HistoryMessage. */
export function toHistoryMessage(message: ChatMessage): HistoryMessage {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: contentText(message.content) };
    case "user":
      return { role: "user", content: contentText(message.content) };
    case "assistant":
      return {
        role: "assistant",
        content: contentText(message.content),
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
      };
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, content: contentText(message.content) };
  }
}

function toClientTool(tool: ChatTool): ClientTool {
  return {
    name: tool.function.name,
    description: tool.function.description ?? "",
    inputSchema: tool.function.parameters ?? DEFAULT_INPUT_SCHEMA,
  };
}

function toReasoningEffort(effort: ChatCompletionRequest["reasoning_effort"]): ReasoningEffort | undefined {
  if (effort == null) return undefined;
  if (effort === "minimal") return "low";
  if (effort === "xhigh") return "high";
  return effort;
}

interface ToolSelection {
  tools: ClientTool[];
  systemHint: string | undefined;
  warnings: string[];
}

/** Applies `tool_choice`: none → no tools; required / named → a hint, since Cursor cannot force a call. */
function selectTools(request: ChatCompletionRequest): ToolSelection {
  const tools = (request.tools ?? []).map(toClientTool);
  const choice = request.tool_choice;
  if (choice == null || choice === "auto" || tools.length === 0) return { tools, systemHint: undefined, warnings: [] };
  if (choice === "none") {
    return { tools: [], systemHint: undefined, warnings: ["tool_choice 'none': the tools were not offered."] };
  }
  if (choice === "required") {
    return {
      tools,
      systemHint: "You must call at least one of the available tools in this reply.",
      warnings: ["tool_choice 'required' cannot be enforced; the model is asked to call a tool."],
    };
  }
  const name = choice.function.name;
  return {
    tools: tools.filter((tool) => tool.name === name),
    systemHint: `You must call the tool '${name}' in this reply.`,
    warnings: [
      `tool_choice '${name}' cannot be enforced; only that tool is offered and the model is asked to call it.`,
    ],
  };
}

/** Normalises a validated chat completion request into turn input plus warnings. */
export function toTurnInput(request: ChatCompletionRequest): TurnInput {
  const selection = selectTools(request);
  const warnings = [...selection.warnings];
  if (request.parallel_tool_calls === false) {
    warnings.push("parallel_tool_calls=false cannot be enforced; the model may call several tools at once.");
  }
  for (const key of ["max_tokens", "max_completion_tokens"] as const) {
    if (request[key] != null) warnings.push(`${key} is not enforced by the Cursor backend.`);
  }
  const reasoningEffort = toReasoningEffort(request.reasoning_effort);
  return {
    messages: request.messages.map(toHistoryMessage),
    tools: selection.tools,
    reasoning: reasoningEffort !== "none",
    reasoningEffort,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
    systemHint: selection.systemHint,
    warnings,
  };
}
