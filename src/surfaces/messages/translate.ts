/**
 * Anthropic Messages request → the engine's surface-neutral {@link EngineRequest}. Pure translation: no routing, no
 * memory. `system` becomes instructions; `role:"system"` messages anywhere in `messages[]` (Claude Code puts them
 * even after a `tool_result`) become `{role:"system"}` messages, never user text; tool_result blocks become
 * `{role:"tool"}` messages; thinking blocks are carried opaquely with their signature.
 */

import type { ClientTool, HistoryToolCall, JsonValue, ReasoningEffort } from "../../backend/types.js";
import type {
  ConversationMessage,
  EngineRequest,
  MessagePart,
  ReasoningBlock,
  ToolChoice,
} from "../../engine/types.js";
import { ImageBudget } from "../kit/image-input.js";
import { jsonOutputInstruction, jsonOutputWarning } from "../kit/json-output.js";
import { choiceFromAnthropic, effortFromBudget as effortOfBudget, withChoice } from "../kit/model-choice.js";
import { fromAnthropicToolId } from "./ids.js";
import type { AnthropicMessageParam, CountTokensRequest } from "./request.js";
import { toServerTools, webToolKind } from "./web-blocks.js";

/** The translated request plus what could only be approximated (for `x-cursor-bridge-warnings`). */
export interface AnthropicTurnInput {
  request: EngineRequest;
  warnings: string[];
}

type TextLike = string | ReadonlyArray<{ text: string }>;
const joinText = (content: TextLike): string =>
  typeof content === "string" ? content : content.map((block) => block.text).join("\n\n");

type UserBlock = Exclude<Extract<AnthropicMessageParam, { role: "user" }>["content"], string>[number];
type ToolResultBlock = Extract<UserBlock, { type: "tool_result" }>;

function toolResultText(block: ToolResultBlock, warnings: string[]): string {
  const content = block.content ?? "";
  if (typeof content === "string") return content;
  const parts: string[] = [];
  for (const part of content) {
    if (part.type === "text") parts.push(part.text);
    else {
      parts.push("[image omitted]");
      warnings.push("images inside tool_result blocks are not forwarded; they were replaced by '[image omitted]'");
    }
  }
  return parts.join("\n");
}

function userMessages(
  content: Extract<AnthropicMessageParam, { role: "user" }>["content"],
  param: string,
  warnings: string[],
  images: ImageBudget,
): ConversationMessage[] {
  if (typeof content === "string") return [{ role: "user", parts: [{ type: "text", text: content }] }];
  const out: ConversationMessage[] = [];
  const parts: MessagePart[] = [];
  content.forEach((block, index) => {
    if (block.type === "tool_result") {
      out.push({
        role: "tool",
        toolCallId: fromAnthropicToolId(block.tool_use_id),
        content: toolResultText(block, warnings),
        isError: block.is_error === true,
        param: `${param}.content.${index}.tool_use_id`,
      });
    } else if (block.type === "text") {
      parts.push({ type: "text", text: block.text });
    } else {
      const image = images.decodeBase64(block.source.data, `${param}.content.${index}.source.data`);
      parts.push({ type: "image", mimeType: image.mimeType, data: image.data });
    }
  });
  if (parts.length > 0) out.push({ role: "user", parts });
  return out;
}

function assistantMessage(content: Extract<AnthropicMessageParam, { role: "assistant" }>["content"]) {
  if (typeof content === "string") {
    return { role: "assistant" as const, text: content, reasoning: [], toolCalls: [] };
  }
  const text: string[] = [];
  const reasoning: ReasoningBlock[] = [];
  const toolCalls: HistoryToolCall[] = [];
  for (const block of content) {
    if (block.type === "text") text.push(block.text);
    else if (block.type === "thinking")
      reasoning.push(
        block.signature === undefined ? { text: block.thinking } : { text: block.thinking, opaque: block.signature },
      );
    else if (block.type === "redacted_thinking") reasoning.push({ text: "", opaque: block.data });
    else if (block.type === "tool_use")
      toolCalls.push({ id: fromAnthropicToolId(block.id), name: block.name, arguments: JSON.stringify(block.input) });
  }
  return { role: "assistant" as const, text: text.join(""), reasoning, toolCalls };
}

/** `messages[]` in the engine's neutral form, in order. */
export function toConversation(
  messages: readonly AnthropicMessageParam[],
  warnings: string[],
  images: ImageBudget = new ImageBudget(),
): ConversationMessage[] {
  return messages.flatMap((message, index): ConversationMessage[] => {
    if (message.role === "system") return [{ role: "system", text: joinText(message.content) }];
    if (message.role === "assistant") return [assistantMessage(message.content)];
    return userMessages(message.content, `messages.${index}`, warnings, images);
  });
}

/**
 * Client tools. Web search / fetch server tools are offered to Cursor instead ({@link toServerTools}); other server
 * tools (no `input_schema`) cannot run through Cursor and are skipped.
 */
export function toClientTools(tools: CountTokensRequest["tools"], warnings: string[]): ClientTool[] {
  const out: ClientTool[] = [];
  for (const tool of tools ?? []) {
    if (webToolKind(tool.type) !== undefined) continue;
    if (tool.input_schema === undefined) {
      warnings.push(`tool '${tool.name}' (${tool.type ?? "server tool"}) has no input_schema and was skipped`);
      continue;
    }
    out.push({
      name: tool.name,
      description: tool.description ?? "",
      inputSchema: tool.input_schema as { [key: string]: JsonValue },
    });
  }
  return out;
}

function toToolChoice(choice: CountTokensRequest["tool_choice"], warnings: string[]): ToolChoice {
  if (choice == null || choice.type === "auto") return "auto";
  if (choice.type === "none") return "none";
  warnings.push(`tool_choice '${choice.type}' is approximated with an instruction: Cursor cannot force a tool call`);
  return choice.type === "any" ? "required" : { name: choice.name };
}

function disablesParallelToolUse(choice: CountTokensRequest["tool_choice"]): boolean {
  return choice != null && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true;
}

const EFFORT: Record<string, ReasoningEffort> = {
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

/** `thinking.budget_tokens` → effort when no `output_config.effort` says otherwise. */
function effortFromBudget(budget: number | undefined): ReasoningEffort | undefined {
  return budget === undefined ? undefined : (EFFORT[effortOfBudget(budget)] ?? "high");
}

/** `system` → instructions (one per text block, in order). */
export function toInstructions(system: CountTokensRequest["system"]): string[] {
  if (system === undefined) return [];
  if (typeof system === "string") return system === "" ? [] : [system];
  return system.map((block) => block.text).filter((text) => text !== "");
}

/**
 * Structured output (`output_config.format`, else the beta's `output_format`): Cursor cannot enforce it, so it becomes
 * the kit's instruction after the system's, with a warning.
 */
function outputFormatInstructions(body: CountTokensRequest, warnings: string[]): string[] {
  const format = body.output_config?.format ?? body.output_format;
  if (format == null) return [];
  const json = { type: "json_schema" as const, schema: format.schema };
  warnings.push(jsonOutputWarning(body.output_config?.format == null ? "output_format" : "output_config.format", json));
  return [jsonOutputInstruction(json)];
}

function serverTools(tools: CountTokensRequest["tools"]): Pick<EngineRequest, "serverTools"> {
  const offered = toServerTools(tools ?? []);
  return offered === undefined ? {} : { serverTools: offered };
}

/**
 * Translates a validated Messages (or count_tokens) request; `images` is the request's image budget, `beta` its
 * `anthropic-beta` header (a `context-1m-*` entry asks for the 1M context).
 * @throws ProxyError 400 for bytes that are no image, 413 past the image budget (both naming the part).
 */
export function toEngineRequest(
  body: CountTokensRequest,
  images: ImageBudget = new ImageBudget(),
  beta?: string | undefined,
): AnthropicTurnInput {
  const warnings: string[] = [];
  const messages = toConversation(body.messages, warnings, images);
  const tools = toClientTools(body.tools, warnings);
  const thinking = body.thinking?.type;
  const reasoning = thinking === "enabled" || thinking === "adaptive";
  const requested = body.output_config?.effort;
  const budget = body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined;
  const reasoningEffort = !reasoning ? undefined : requested != null ? EFFORT[requested] : effortFromBudget(budget);
  return {
    request: {
      model: body.model,
      instructions: [...toInstructions(body.system), ...outputFormatInstructions(body, warnings)],
      messages,
      tools,
      ...serverTools(body.tools),
      // Cursor may still make several calls in a step: the client gets them one per message.
      ...(disablesParallelToolUse(body.tool_choice) ? { oneToolCallPerAnswer: true } : {}),
      options: {
        reasoning,
        reasoningEffort,
        toolChoice: toToolChoice(body.tool_choice, warnings),
        ...withChoice(choiceFromAnthropic(body.thinking, requested, beta)),
      },
    },
    warnings: [...new Set(warnings)],
  };
}
