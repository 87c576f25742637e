/**
 * OpenAI Chat Completions request → the engine's surface-neutral {@link EngineRequest}, plus what only the chat
 * surface needs (stream flags) and warnings for what Cursor cannot honour (unsupported parameters warn, never fail).
 * Model resolution, tool_choice handling and routing are the engine's.
 */
import type { ClientTool, JsonValue, ReasoningEffort } from "../../backend/types.js";
import type { ConversationMessage, EngineRequest, MessagePart, ToolChoice } from "../../engine/types.js";
import { ImageBudget } from "../kit/image-input.js";
import { choiceFromEffort, withChoice } from "../kit/model-choice.js";
import type { ChatCompletionRequest, ChatMessage, ChatTool } from "./request.js";
import { outputConstraints } from "./response-format.js";

/** What {@link toTurnInput} derives from a validated request. */
export interface TurnInput {
  /** The engine request: every message in order (system + developer → `system`), tools and options. */
  request: EngineRequest;
  /** `stream: true`. */
  stream: boolean;
  /** `stream_options.include_usage: true`. */
  includeUsage: boolean;
  /** Human-readable notes about requested behaviour that is not (or only approximately) honoured. */
  warnings: string[];
  /** `stop`, as a list (the kit cuts the answer at the first). */
  stopSequences: string[];
}

const DEFAULT_INPUT_SCHEMA: { [key: string]: JsonValue } = { type: "object", properties: {} };

type ContentPart =
  | { type: "text"; text: string }
  | { type: "refusal"; refusal: string }
  | { type: "image_url"; image_url: { url: string } };

/** Joins text (and refusal) parts; a plain string is returned as is, `null`/absent becomes "". Images are skipped. */
function contentText(content: string | readonly ContentPart[] | null | undefined): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content
    .flatMap((part) => (part.type === "text" ? [part.text] : part.type === "refusal" ? [part.refusal] : []))
    .join("\n");
}

/** User content → engine parts: the text first, then each image decoded from its data: URL (in order). */
function userParts(content: string | readonly ContentPart[], index: number, images: ImageBudget): MessagePart[] {
  const parts: MessagePart[] = [{ type: "text", text: contentText(content) }];
  if (typeof content === "string") return parts;
  content.forEach((part, j) => {
    if (part.type !== "image_url") return;
    const image = images.decode(part.image_url.url, `messages[${index}].content[${j}].image_url.url`);
    parts.push({ type: "image", mimeType: image.mimeType, data: image.data });
  });
  return parts;
}

/**
 * One OpenAI message → one engine message. `index` names the message in errors; `images` decodes image parts
 * (400 for http(s) URLs or bytes that are not an image, 413 past the request's image budget).
 */
export function toConversationMessage(
  message: ChatMessage,
  index = 0,
  images: ImageBudget = new ImageBudget(),
): ConversationMessage {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", text: contentText(message.content) };
    case "user":
      return { role: "user", parts: userParts(message.content, index, images) };
    case "assistant":
      return {
        role: "assistant",
        text: contentText(message.content),
        reasoning: [],
        toolCalls: (message.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
        })),
      };
    case "tool":
      return { role: "tool", toolCallId: message.tool_call_id, content: contentText(message.content), isError: false };
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
  if (effort === "xhigh" || effort === "max") return "high";
  return effort;
}

function toToolChoice(choice: ChatCompletionRequest["tool_choice"]): ToolChoice {
  if (choice == null || choice === "auto") return "auto";
  if (choice === "none" || choice === "required") return choice;
  if (choice.type === "allowed_tools") return choice.allowed_tools.mode;
  return { name: choice.function.name };
}

/** `allowed_tools`: only the tools it lists are offered (the parser checked that each is declared). */
function allowedTools(choice: ChatCompletionRequest["tool_choice"], tools: ClientTool[]): ClientTool[] {
  if (choice == null || typeof choice !== "object" || choice.type !== "allowed_tools") return tools;
  const names = new Set(choice.allowed_tools.tools.map((tool) => tool.function.name));
  return tools.filter((tool) => names.has(tool.name));
}

/** What Cursor cannot enforce about `tool_choice` (the engine turns the constraint into an instruction). */
function toolChoiceWarnings(choice: ToolChoice, tools: readonly ClientTool[]): string[] {
  if (choice === "auto" || tools.length === 0) return [];
  if (choice === "none") return ["tool_choice 'none': the tools were not offered."];
  if (choice === "required") return ["tool_choice 'required' cannot be enforced; the model is asked to call a tool."];
  return [
    `tool_choice '${choice.name}' cannot be enforced; only that tool is offered and the model is asked to call it.`,
  ];
}

/** Options of {@link toTurnInput}. */
export interface TurnInputOptions {
  /** Total decoded image bytes accepted in one request. @default DEFAULT_MAX_IMAGE_BYTES (15 MiB) */
  maxImageBytes?: number | undefined;
}

/** Translates a validated chat completion request into an engine request plus warnings. */
export function toTurnInput(request: ChatCompletionRequest, options: TurnInputOptions = {}): TurnInput {
  const images = new ImageBudget(options.maxImageBytes);
  const tools = allowedTools(request.tool_choice, (request.tools ?? []).map(toClientTool));
  const toolChoice = toToolChoice(request.tool_choice);
  const warnings = toolChoiceWarnings(toolChoice, tools);
  const constraints = outputConstraints(request.response_format);
  warnings.push(...constraints.warnings);
  const reasoningEffort = toReasoningEffort(request.reasoning_effort);
  // The optional fields assigned, not spread in: each conditional spread cost an object and a fresh hidden class.
  const engineRequest: EngineRequest = {
    model: request.model,
    instructions: constraints.instruction === undefined ? [] : [constraints.instruction],
    messages: request.messages.map((message, index) => toConversationMessage(message, index, images)),
    tools,
    options: {
      reasoning: reasoningEffort !== "none",
      reasoningEffort,
      toolChoice,
      ...withChoice(choiceFromEffort(request.reasoning_effort)),
    },
  };
  if (request.web_search_options != null) engineRequest.serverTools = { webSearch: {} };
  // Cursor may still make several calls in a step: the client gets them one per answer.
  if (request.parallel_tool_calls === false) engineRequest.oneToolCallPerAnswer = true;
  return {
    request: engineRequest,
    stream: request.stream === true,
    includeUsage: request.stream_options?.include_usage === true,
    warnings,
    stopSequences: request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : [...request.stop],
  };
}
