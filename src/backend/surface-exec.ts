/**
 * Execs a surface runs itself (`SurfaceExecutor`, set by ACP): Cursor's exec args become plain {@link SurfaceExec}
 * data, and the surface's answer becomes the typed result(s) of that exec (the same conversion a caller tool's text
 * gets, native-results.ts). Pure functions; surface-exec-runner.ts runs them while the Run stays open.
 */

import { TodoStatus } from "../gen/agent/v1/enums_pb.js";
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import { type ExecCase, type ExecResultInit, rejectNativeExec, toNativeResult } from "./native-results.js";
import type { ToolNameMap } from "./tool-names.js";
import type { SurfaceExec, SurfaceExecResult, SurfaceTodo } from "./types.js";
import { decodeArgumentsMap } from "./value-codec.js";

/** The plain form of an exec, or undefined for an exec no surface runs (it is rejected as without an executor). */
export function toSurfaceExec(exec: ExecCase, toolNames: ToolNameMap): SurfaceExec | undefined {
  switch (exec.case) {
    case "readArgs":
      return { kind: "read", path: exec.value.path };
    case "writeArgs":
      return { kind: "write", path: exec.value.path, text: exec.value.fileText };
    case "deleteArgs":
      return { kind: "delete", path: exec.value.path };
    case "shellArgs":
    case "shellStreamArgs": {
      const { command, workingDirectory, timeout } = exec.value;
      return { kind: "shell", command, workingDirectory, timeoutMs: timeout > 0 ? timeout : undefined };
    }
    case "lsArgs":
      return { kind: "ls", path: exec.value.path };
    case "grepArgs": {
      const { pattern, path, glob, caseInsensitive } = exec.value;
      // GrepArgs with an empty pattern and a glob is a glob exec (§4.7).
      if (pattern === "" && glob !== undefined) return { kind: "glob", pattern: glob, path };
      return { kind: "grep", pattern, path, glob, caseInsensitive: caseInsensitive === true };
    }
    case "fetchArgs":
      return { kind: "fetch", url: exec.value.url };
    case "mcpArgs": {
      const args = exec.value;
      const name = toolNames.toCaller(args.toolName) ?? toolNames.toCaller(args.name) ?? (args.toolName || args.name);
      return { kind: "mcp", toolName: name, arguments: decodeArgumentsMap(args.args) };
    }
    default:
      return undefined;
  }
}

/** The native args' `tool_call_id` (may be empty). */
export function execToolCallId(exec: ExecCase): string {
  const value = exec.value as { toolCallId?: unknown } | undefined;
  return typeof value?.toolCallId === "string" ? value.toolCallId : "";
}

/** The typed result(s) of a surface's answer. */
export function surfaceResults(exec: ExecCase, result: SurfaceExecResult): ExecResultInit[] {
  if (result.kind === "rejected") return rejectNativeExec(exec, result.reason);
  if (exec.case !== "mcpArgs") return toNativeResult(exec, result);
  const content = [{ content: { case: "text" as const, value: { text: result.content } } }];
  return [{ case: "mcpResult", value: { result: { case: "success", value: { content, isError: result.isError } } } }];
}

const TODO_STATUS: Partial<Record<TodoStatus, SurfaceTodo["status"]>> = {
  [TodoStatus.PENDING]: "pending",
  [TodoStatus.IN_PROGRESS]: "in_progress",
  [TodoStatus.COMPLETED]: "completed",
  [TodoStatus.CANCELLED]: "cancelled",
};

/** The todo list of a completed `update_todos` tool call (its result, else its args); undefined for other calls. */
export function todosOf(toolCall: ToolCall | undefined): SurfaceTodo[] | undefined {
  if (toolCall?.tool.case !== "updateTodosToolCall") return undefined;
  const call = toolCall.tool.value;
  const items = call.result?.result.case === "success" ? call.result.result.value.todos : (call.args?.todos ?? []);
  return items.map((item) => ({ content: item.content, status: TODO_STATUS[item.status] ?? "pending" }));
}
