/**
 * Cursor's task tool (subagents, cursor-protocol-addendum-3 T4): the task is a server-side tool call
 * (`tool_call_started` / `tool_call_completed` with a `task_tool_call`), and the subagent's own updates arrive in
 * between as `tool_call_delta` frames whose `task_tool_call_delta.interaction_update` is a serialized nested
 * `InteractionUpdate`. This module turns both into neutral {@link SubagentStep}s, recursing into nested tasks (a
 * nested task's steps are reported as its parent's). Bytes that do not decode are reported as text, never dropped.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { type InteractionUpdate, InteractionUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import { completedToolOutcome } from "./completed-tool-call.js";
import type { SubagentStep } from "./types.js";

/** Deepest nesting of tasks followed. */
const MAX_DEPTH = 8;

/** Title and kind of a nested tool call. */
function describe(toolCall: ToolCall | undefined): {
  title: string;
  toolKind: Extract<SubagentStep, { kind: "tool" }>["toolKind"];
} {
  const tool = toolCall?.tool;
  switch (tool?.case) {
    case "readToolCall":
      return { title: `Read ${tool.value.args?.path ?? ""}`, toolKind: "read" };
    case "editToolCall":
      return { title: `Edit ${tool.value.args?.path ?? ""}`, toolKind: "edit" };
    case "deleteToolCall":
      return { title: "Delete", toolKind: "delete" };
    case "grepToolCall":
      return { title: `Grep ${tool.value.args?.pattern ?? ""}`, toolKind: "search" };
    case "globToolCall":
      return { title: `Find ${tool.value.args?.globPattern ?? ""}`, toolKind: "search" };
    case "lsToolCall":
      return { title: `List ${tool.value.args?.path ?? ""}`, toolKind: "search" };
    case "shellToolCall":
      return { title: tool.value.args?.command ?? "shell", toolKind: "execute" };
    case "webFetchToolCall":
    case "fetchToolCall":
      return { title: "Fetch", toolKind: "fetch" };
    case "taskToolCall":
      return { title: `Task ${tool.value.args?.description ?? ""}`.trim(), toolKind: "other" };
    case undefined:
      return { title: "tool", toolKind: "other" };
    default:
      return { title: (tool?.case ?? "tool").replace(/ToolCall$/, ""), toolKind: "other" };
  }
}

/** The task a `tool_call_started` / `tool_call_completed` names, when it is one. */
export function taskOf(toolCall: ToolCall | undefined): { description: string; failed: boolean } | undefined {
  if (toolCall?.tool.case !== "taskToolCall") return undefined;
  const task = toolCall.tool.value;
  return { description: task.args?.description ?? "", failed: task.result?.result.case === "error" };
}

/** The steps in one nested update's bytes. */
export function subagentSteps(bytes: Uint8Array, depth = 0): SubagentStep[] {
  let update: InteractionUpdate;
  try {
    update = fromBinary(InteractionUpdateSchema, bytes);
  } catch {
    return [{ kind: "text", text: `(a subagent update of ${bytes.length} bytes that did not decode)` }];
  }
  const u = update.message;
  switch (u.case) {
    case "textDelta":
      return u.value.text === "" ? [] : [{ kind: "text", text: u.value.text }];
    case "toolCallStarted":
    case "toolCallCompleted": {
      const { title, toolKind } = describe(u.value.toolCall);
      const failed =
        u.case === "toolCallCompleted" && u.value.toolCall !== undefined
          ? completedToolOutcome(u.value.toolCall)?.isError === true
          : false;
      const status = u.case === "toolCallStarted" ? "started" : failed ? "failed" : "completed";
      return [{ kind: "tool", toolCallId: u.value.callId, title, toolKind, status }];
    }
    case "toolCallDelta": {
      const delta = u.value.toolCallDelta?.delta;
      if (delta?.case !== "taskToolCallDelta" || depth >= MAX_DEPTH) return [];
      return subagentSteps(delta.value.interactionUpdate, depth + 1);
    }
    default:
      return [];
  }
}
