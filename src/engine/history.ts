/**
 * EngineRequest → what the agent client receives: the history in the backend's form, the tools to offer and the
 * tool results that may resume a parked turn. Instructions (top-level ones, `system` messages inside the list and
 * the `tool_choice` hint) become ONE system message at index 0, present even when empty: the history key skips
 * it, and a checkpoint's covered-message count stays comparable whatever the instructions of a request are.
 */
import type { ClientTool, HistoryMessage, ServerTools, ToolResult } from "../backend/types.js";
import { ProxyError } from "../util/errors.js";
import type { ConversationMessage, EngineRequest, ToolChoice } from "./types.js";

/** What the engine hands the agent client for one request. */
export interface BackendInput {
  /** `[system (all instructions), …history]`. */
  messages: HistoryMessage[];
  tools: ClientTool[];
  /** The server-side tools offered (none when `tool_choice` is `none`). */
  serverTools: ServerTools | undefined;
  /** The `tool` messages after the last assistant message, in order. */
  trailingResults: ToolResult[];
}

/** The instruction that stands in for a tool constraint Cursor cannot enforce; undefined for `auto`/`none`. */
export function toolChoiceInstruction(choice: ToolChoice, tools: readonly ClientTool[]): string | undefined {
  if (choice === "auto" || choice === "none" || tools.length === 0) return undefined;
  if (choice === "required") return "You must call at least one of the available tools in this reply.";
  return `You must call the tool '${choice.name}' in this reply.`;
}

function selectTools(choice: ToolChoice, tools: readonly ClientTool[]): ClientTool[] {
  if (choice === "none") return [];
  if (typeof choice === "object") return tools.filter((tool) => tool.name === choice.name);
  return [...tools];
}

/**
 * A `tool` message must answer a call of an earlier assistant message of the same request, as OpenAI requires, and
 * only once: a second result for a call (two `tool` messages with one id) is a 400 naming it rather than two results
 * for Cursor. A later assistant message that makes a call with the same id again may be answered again.
 * (A call that is in the history but no longer parked is fine: the conversation continues from its checkpoint.)
 */
function checkToolResults(messages: readonly ConversationMessage[]): void {
  /** Call ids made so far → whether a result answered them already. */
  const calls = new Map<string, boolean>();
  messages.forEach((message, index) => {
    if (message.role === "assistant") for (const call of message.toolCalls) calls.set(call.id, false);
    if (message.role !== "tool") return;
    const answered = calls.get(message.toolCallId);
    if (answered === false) {
      calls.set(message.toolCallId, true);
      return;
    }
    const param = message.param ?? `messages[${index}].tool_call_id`;
    throw new ProxyError(
      "invalid_request",
      answered === undefined
        ? `${param} '${message.toolCallId}' does not answer a tool call of an earlier assistant message.`
        : `${param} '${message.toolCallId}' answers a tool call that an earlier result already answered.`,
      { param },
    );
  });
}

function toHistoryMessage(message: Exclude<ConversationMessage, { role: "system" }>): HistoryMessage {
  switch (message.role) {
    case "user": {
      const text = message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
      const images = message.parts.flatMap((part) =>
        part.type === "image" ? [{ mimeType: part.mimeType, data: part.data }] : [],
      );
      return images.length === 0 ? { role: "user", content: text } : { role: "user", content: text, images };
    }
    case "assistant":
      return { role: "assistant", content: message.text, toolCalls: message.toolCalls };
    case "tool":
      return message.isError
        ? { role: "tool", toolCallId: message.toolCallId, content: message.content, isError: true }
        : { role: "tool", toolCallId: message.toolCallId, content: message.content };
  }
}

/** Translates and validates a request (400 `invalid_request` for an empty list or an unanswerable tool result). */
export function toBackendInput(request: EngineRequest): BackendInput {
  if (request.messages.length === 0) {
    throw new ProxyError("invalid_request", "A turn needs at least one message.", { param: "messages" });
  }
  checkToolResults(request.messages);
  const tools = selectTools(request.options.toolChoice, request.tools);
  const instructions = [...request.instructions];
  const history: HistoryMessage[] = [];
  for (const message of request.messages) {
    if (message.role === "system") instructions.push(message.text);
    else history.push(toHistoryMessage(message));
  }
  const hint = toolChoiceInstruction(request.options.toolChoice, tools);
  if (hint !== undefined) instructions.push(hint);
  const system = instructions.filter((text) => text.trim() !== "").join("\n\n");
  const trailingResults: ToolResult[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === "system") continue;
    if (message?.role !== "tool") break;
    trailingResults.unshift({ toolCallId: message.toolCallId, content: message.content, isError: message.isError });
  }
  const serverTools = request.options.toolChoice === "none" ? undefined : request.serverTools;
  return { messages: [{ role: "system", content: system }, ...history], tools, serverTools, trailingResults };
}
