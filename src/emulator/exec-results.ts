/**
 * Reply text for each exec result (what the scripted model "read" from the tool), and the conversions from exec
 * results to the ToolCall result shapes that differ from them (read → ReadToolResult, write → EditResult; §4.10).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type {
  LsDirectoryTreeNode,
  LsResult,
  ReadResult,
  WriteArgs,
  WriteResult,
} from "../gen/agent/v1/file_exec_pb.js";
import type { GrepResult, GrepUnionResult } from "../gen/agent/v1/grep_exec_pb.js";
import type { McpResult } from "../gen/agent/v1/mcp_pb.js";
import type { FetchResult } from "../gen/agent/v1/misc_exec_pb.js";
import type { ShellResult } from "../gen/agent/v1/shell_exec_pb.js";
import {
  type EditResult,
  EditResultSchema,
  type ReadToolResult,
  ReadToolResultSchema,
} from "../gen/agent/v1/tool_args_pb.js";
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";

const NO_RESULT = "(no result)";

/** Text of an MCP result: the text items, or the failure. */
export function mcpText(result: McpResult | undefined): string {
  const r = result?.result;
  switch (r?.case) {
    case "success": {
      const text = r.value.content
        .map((item) =>
          item.content.case === "text"
            ? item.content.value.text
            : item.content.case === "image"
              ? `[image ${item.content.value.mimeType}]`
              : "",
        )
        .join("\n");
      return r.value.isError ? `error: ${text}` : text;
    }
    case "error":
      return `error: ${r.value.error}`;
    case "rejected":
      return `rejected: ${r.value.reason}`;
    case "permissionDenied":
      return `permission denied: ${r.value.error}`;
    case "toolNotFound":
      return `tool not found: ${r.value.name}`;
    default:
      return NO_RESULT;
  }
}

/** Text of a shell result. */
export function shellText(result: ShellResult | undefined): string {
  const r = result?.result;
  switch (r?.case) {
    case "success":
      return r.value.exitCode === 0
        ? r.value.stdout.trimEnd()
        : `exit code ${r.value.exitCode}: ${r.value.stdout}${r.value.stderr}`.trimEnd();
    case "failure":
      return `failed with exit code ${r.value.exitCode}: ${r.value.stderr || r.value.stdout}`.trimEnd();
    case "timeout":
      return `timed out after ${r.value.timeoutMs} ms`;
    case "rejected":
      return `rejected: ${r.value.reason}`;
    case "spawnError":
      return `error: ${r.value.error}`;
    case "permissionDenied":
      return `permission denied: ${r.value.error}`;
    default:
      return NO_RESULT;
  }
}

/** Text of a read result. */
export function readText(result: ReadResult | undefined): string {
  const r = result?.result;
  switch (r?.case) {
    case "success":
      return r.value.output.case === "data" ? `<${r.value.output.value.length} bytes>` : (r.value.output.value ?? "");
    case "error":
      return `error: ${r.value.error}`;
    case "rejected":
      return `rejected: ${r.value.reason}`;
    case "fileNotFound":
      return `file not found: ${r.value.path}`;
    case "permissionDenied":
      return `permission denied: ${r.value.path}`;
    case "invalidFile":
      return `invalid file: ${r.value.reason}`;
    default:
      return NO_RESULT;
  }
}

/** The UI-level read result (ReadToolResult has only a success case in the known schema). */
export function readToolResultOf(result: ReadResult | undefined): ReadToolResult | undefined {
  if (result?.result.case !== "success") return undefined;
  const success = result.result.value;
  const output: MessageInitShape<typeof ReadToolResultSchema>["result"] = {
    case: "success",
    value: {
      output:
        success.output.case === "data"
          ? { case: "data", value: success.output.value }
          : { case: "content", value: success.output.value ?? "" },
      isEmpty: success.output.value === undefined || success.output.value.length === 0,
      totalLines: success.totalLines,
      fileSize: Number(success.fileSize),
      path: success.path,
    },
  };
  return create(ReadToolResultSchema, { result: output });
}

function treeEntries(node: LsDirectoryTreeNode | undefined, prefix: string, out: string[]): void {
  if (node === undefined) return;
  for (const dir of node.childrenDirs) {
    const name = dir.absPath.slice(dir.absPath.lastIndexOf("/") + 1);
    out.push(`${prefix}${name}/`);
    treeEntries(dir, `${prefix}${name}/`, out);
  }
  for (const file of node.childrenFiles) out.push(`${prefix}${file.name}`);
}

/** Text of an ls result: the entries of the tree, directories with a trailing slash. */
export function lsText(result: LsResult | undefined): string {
  const r = result?.result;
  switch (r?.case) {
    case "success":
    case "timeout": {
      const entries: string[] = [];
      treeEntries(r.value.directoryTreeRoot, "", entries);
      return entries.join(", ");
    }
    case "error":
      return `error: ${r.value.error}`;
    case "rejected":
      return `rejected: ${r.value.reason}`;
    default:
      return NO_RESULT;
  }
}

function unionText(union: GrepUnionResult): string[] {
  const r = union.result;
  switch (r.case) {
    case "files":
      return r.value.files;
    case "count":
      return r.value.counts.map((c) => `${c.file}: ${c.count}`);
    case "content":
      return r.value.matches.flatMap((file) => file.matches.map((m) => `${file.file}:${m.lineNumber}:${m.content}`));
    default:
      return [];
  }
}

/** Text of a grep result: matches, files or counts across all workspaces. */
export function grepText(result: GrepResult | undefined): string {
  const r = result?.result;
  if (r?.case === "error") return `error: ${r.value.error}`;
  if (r?.case !== "success") return NO_RESULT;
  const lines = Object.values(r.value.workspaceResults).flatMap(unionText);
  return lines.length === 0 ? "no matches" : lines.join("\n");
}

/** Text of a write result. */
export function writeText(result: WriteResult | undefined): string {
  const r = result?.result;
  switch (r?.case) {
    case "success":
      return `wrote ${r.value.linesCreated} lines to ${r.value.path}`;
    case "permissionDenied":
      return `permission denied: ${r.value.error}`;
    case "noSpace":
      return `no space left for ${r.value.path}`;
    case "error":
      return `error: ${r.value.error}`;
    case "rejected":
      return `rejected: ${r.value.reason}`;
    default:
      return NO_RESULT;
  }
}

/** The UI-level edit result of a native write. */
export function editResultOf(result: WriteResult | undefined, args: WriteArgs): EditResult | undefined {
  if (result?.result.case !== "success") return undefined;
  const success = result.result.value;
  return create(EditResultSchema, {
    result: {
      case: "success",
      value: { path: success.path, linesAdded: success.linesCreated, afterFullFileContent: args.fileText },
    },
  });
}

/** Text of a fetch result. */
export function fetchText(result: FetchResult | undefined): string {
  const r = result?.result;
  if (r?.case === "success") return r.value.content;
  if (r?.case === "error") return `error: ${r.value.error}`;
  return NO_RESULT;
}

/** Reply name and result text of a stored tool call (a ConversationStep read back from the state). */
export function describeToolCall(call: ToolCall): { name: string; text: string } | undefined {
  const t = call.tool;
  switch (t.case) {
    case "mcpToolCall":
      return { name: t.value.args?.toolName || t.value.args?.name || "tool", text: mcpText(t.value.result) };
    case "shellToolCall":
      return { name: "shell", text: shellText(t.value.result) };
    case "readToolCall": {
      const r = t.value.result?.result;
      const text = r?.case === "success" && r.value.output.case === "content" ? r.value.output.value : NO_RESULT;
      return { name: "read", text };
    }
    case "lsToolCall":
      return { name: "ls", text: lsText(t.value.result) };
    case "grepToolCall":
      return { name: "grep", text: grepText(t.value.result) };
    case "editToolCall": {
      const r = t.value.result?.result;
      const text = r?.case === "success" ? `wrote ${r.value.linesAdded ?? 0} lines to ${r.value.path}` : NO_RESULT;
      return { name: "write", text };
    }
    case "fetchToolCall":
      return { name: "fetch", text: fetchText(t.value.result) };
    default:
      return undefined;
  }
}
