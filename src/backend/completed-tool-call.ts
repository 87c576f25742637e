/**
 * Reads the decoded result Cursor reports in `tool_call_completed` (docs/protocol.md §4.6; result shapes from
 * docs/protocol.md): which case it is (success, error, rejected, file_not_found, …) and the text a person
 * or model would need (error messages, rejection reasons, paths). Generic over the ToolCall cases: every
 * `*ToolCall` has `result = 2` holding a `result` oneof whose non-success cases carry their text in a few known
 * fields. Pure.
 */
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";

/** What a completed tool call says about its outcome. */
export interface CompletedToolOutcome {
  /** The ToolCall case, e.g. `readToolCall`. */
  tool: string;
  /** The result case, e.g. `success`, `error`, `rejected`, `fileNotFound`; `none` when the call carries no result. */
  status: string;
  /** True for every case other than a success. */
  isError: boolean;
  /** The case's human-readable text: error message, rejection reason, path; empty for a plain success. */
  text: string;
}

/** Fields that hold the explanation of a failed case, most specific first. */
const TEXT_FIELDS = ["modelVisibleError", "errorMessage", "error", "clientVisibleError", "reason", "message"] as const;
/** Fields naming what the call was about. */
const SUBJECT_FIELDS = ["path", "uri", "url", "command"] as const;

type Fields = { [key: string]: unknown };

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null;
}

function isSuccessCase(status: string): boolean {
  return status === "success" || status.endsWith("Success") || status === "async";
}

function firstText(value: Fields, names: readonly string[]): string | undefined {
  for (const name of names) {
    const field = value[name];
    if (typeof field === "string" && field !== "") return field;
    // Error messages are sometimes a message of their own ({message = 1}).
    if (isObject(field) && typeof field.message === "string" && field.message !== "") return field.message;
  }
  return undefined;
}

/** The outcome of a completed tool call, or undefined when the ToolCall has no case at all. */
export function completedToolOutcome(toolCall: ToolCall): CompletedToolOutcome | undefined {
  const tool = toolCall.tool;
  if (tool.case === undefined) return undefined;
  const result: unknown = (tool.value as Fields).result;
  const oneof = isObject(result) ? result.result : undefined;
  if (!isObject(oneof) || typeof oneof.case !== "string") {
    return { tool: tool.case, status: "none", isError: false, text: "" };
  }
  const status = oneof.case;
  const value = isObject(oneof.value) ? oneof.value : {};
  if (isSuccessCase(status)) return { tool: tool.case, status, isError: false, text: "" };
  const explanation = firstText(value, TEXT_FIELDS);
  const subject = firstText(value, SUBJECT_FIELDS);
  const parts = [subject, explanation].filter((part): part is string => part !== undefined);
  return { tool: tool.case, status, isError: true, text: parts.length > 0 ? parts.join(": ") : status };
}

/**
 * The `tool_call_id` of the arguments a ToolCall carries (every `*ToolCall` has `args = 1`, and most args name their
 * call), or "" when it has none. For a client (MCP) tool it need not equal the envelope's `call_id` (docs/protocol.md
 * §4.10).
 */
export function argsToolCallId(toolCall: ToolCall): string {
  const tool = toolCall.tool;
  if (tool.case === undefined) return "";
  const args: unknown = (tool.value as Fields).args;
  return isObject(args) && typeof args.toolCallId === "string" ? args.toolCallId : "";
}
