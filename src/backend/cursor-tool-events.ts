/**
 * What Cursor's own tools show the caller when they complete (docs/protocol.md §4.6): a subagent's end (the task tool,
 * cursor-protocol-addendum-3.md T4), and a web search's or fetch's outcome (web-tools.ts).
 */
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import { taskOf } from "./subagent-steps.js";
import type { BackendEvent } from "./types.js";
import { WebToolPolicy, webFetchEvent, webSearchEvent } from "./web-tools.js";

/** The event a `tool_call_completed` of Cursor's own tool shows the caller; undefined for other calls. */
export function completedCursorToolEvent(
  callId: string,
  toolCall: ToolCall | undefined,
  web: WebToolPolicy | undefined,
): BackendEvent | undefined {
  const task = taskOf(toolCall);
  if (task !== undefined) return { type: "subagent", taskCallId: callId, step: { kind: "ended", failed: task.failed } };
  const tool = toolCall?.tool;
  if (tool?.case === "webSearchToolCall")
    return webSearchEvent(callId, tool.value, web ?? new WebToolPolicy(undefined));
  if (tool?.case === "webFetchToolCall") return webFetchEvent(callId, tool.value, web ?? new WebToolPolicy(undefined));
  return undefined;
}
