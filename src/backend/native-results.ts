/**
 * Caller tool text → typed native exec results, and the typed rejections used when no caller tool fits
 * (docs/protocol.md §4.7 result schemas, §5.1 rejections, §5.2 EPH's conversions). Pure functions.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ExecClientMessageSchema, ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import type { LsDirectoryTreeNodeSchema } from "../gen/agent/v1/file_exec_pb.js";
import { type GrepArgs, GrepUnionResultSchema } from "../gen/agent/v1/grep_exec_pb.js";
import { type GrepUnion, parseGrepOutput } from "./grep-output.js";

/** One `ExecClientMessage.message` value (a result case), as an init shape. */
export type ExecResultInit = NonNullable<MessageInitShape<typeof ExecClientMessageSchema>["message"]>;

/** The args case of an exec request. */
export type ExecCase = ExecServerMessage["message"];

/** Text output of a caller tool. */
export interface ToolOutput {
  content: string;
  isError: boolean;
  /** A shell's real exit code, when the caller knows it (else 1 for an error, 0 otherwise). */
  exitCode?: number | undefined;
}

function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Non-empty output lines, trimmed. */
function outputLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** Builds an `LsDirectoryTreeNode` rooted at `root` from a list of paths (EPH builds it from glob output, §4.7). */
export function buildDirectoryTree(root: string, text: string): MessageInitShape<typeof LsDirectoryTreeNodeSchema> {
  const base = root.replace(/\/+$/, "") || "/";
  type Node = { absPath: string; dirs: Map<string, Node>; files: string[] };
  const top: Node = { absPath: base, dirs: new Map(), files: [] };
  for (const line of outputLines(text)) {
    if (line.startsWith("(")) continue;
    const relative = line.startsWith(`${base}/`) ? line.slice(base.length + 1) : line.replace(/^\.?\//, "");
    const isDir = relative.endsWith("/");
    const parts = relative.split("/").filter((part) => part !== "");
    if (parts.length === 0) continue;
    let node = top;
    const dirParts = isDir ? parts : parts.slice(0, -1);
    for (const part of dirParts) {
      let next = node.dirs.get(part);
      if (next === undefined) {
        next = { absPath: `${node.absPath === "/" ? "" : node.absPath}/${part}`, dirs: new Map(), files: [] };
        node.dirs.set(part, next);
      }
      node = next;
    }
    const file = isDir ? undefined : parts.at(-1);
    if (file !== undefined) node.files.push(file);
  }
  const toInit = (node: Node): { init: MessageInitShape<typeof LsDirectoryTreeNodeSchema>; count: number } => {
    const children = [...node.dirs.values()].map(toInit);
    const count = node.files.length + children.reduce((sum, child) => sum + child.count, 0);
    const extensions: Record<string, number> = {};
    for (const name of node.files) {
      const dot = name.lastIndexOf(".");
      const ext = dot > 0 ? name.slice(dot) : "";
      extensions[ext] = (extensions[ext] ?? 0) + 1;
    }
    for (const child of children) {
      for (const [ext, n] of Object.entries(child.init.fullSubtreeExtensionCounts ?? {})) {
        extensions[ext] = (extensions[ext] ?? 0) + n;
      }
    }
    return {
      init: {
        absPath: node.absPath,
        childrenDirs: children.map((child) => child.init),
        childrenFiles: node.files.map((name) => ({ name })),
        childrenWereProcessed: true,
        fullSubtreeExtensionCounts: extensions,
        numFiles: count,
      },
      count,
    };
  };
  return toInit(top).init;
}

function grepSuccess(args: GrepArgs, union: GrepUnion, mode: string): ExecResultInit {
  const key = args.path ?? ".";
  return {
    case: "grepResult",
    value: {
      result: {
        case: "success",
        value: {
          pattern: args.pattern,
          path: key,
          outputMode: mode,
          workspaceResults: { [key]: create(GrepUnionResultSchema, { result: union }) },
        },
      },
    },
  };
}

/** Converts a caller tool's output into the typed result(s) for the native exec. */
export function toNativeResult(exec: ExecCase, output: ToolOutput): ExecResultInit[] {
  const { content, isError } = output;
  switch (exec.case) {
    case "readArgs": {
      const path = exec.value.path;
      if (isError)
        return [{ case: "readResult", value: { result: { case: "error", value: { path, error: content } } } }];
      const success = { path, output: { case: "content" as const, value: content }, totalLines: lineCount(content) };
      return [
        {
          case: "readResult",
          value: { result: { case: "success", value: { ...success, fileSize: BigInt(byteLength(content)) } } },
        },
      ];
    }
    case "writeArgs": {
      const { path, fileText } = exec.value;
      if (isError)
        return [{ case: "writeResult", value: { result: { case: "error", value: { path, error: content } } } }];
      const success = { path, linesCreated: lineCount(fileText), fileSize: byteLength(fileText) };
      return [{ case: "writeResult", value: { result: { case: "success", value: success } } }];
    }
    case "deleteArgs": {
      const path = exec.value.path;
      if (isError)
        return [{ case: "deleteResult", value: { result: { case: "error", value: { path, error: content } } } }];
      return [{ case: "deleteResult", value: { result: { case: "success", value: { path, deletedFile: path } } } }];
    }
    case "shellArgs": {
      const { command, workingDirectory } = exec.value;
      const common = { command, workingDirectory, exitCode: output.exitCode ?? (isError ? 1 : 0) };
      const result = isError
        ? { case: "failure" as const, value: { ...common, stderr: content, interleavedOutput: content } }
        : { case: "success" as const, value: { ...common, stdout: content, interleavedOutput: content } };
      return [{ case: "shellResult", value: { result } }];
    }
    case "shellStreamArgs": {
      const cwd = exec.value.workingDirectory;
      const data = isError
        ? { case: "stderr" as const, value: { data: content } }
        : { case: "stdout" as const, value: { data: content } };
      return [
        { case: "shellStream", value: { event: { case: "start", value: {} } } },
        { case: "shellStream", value: { event: data } },
        {
          case: "shellStream",
          value: { event: { case: "exit", value: { code: output.exitCode ?? (isError ? 1 : 0), cwd } } },
        },
      ];
    }
    case "lsArgs": {
      const path = exec.value.path;
      if (isError) return [{ case: "lsResult", value: { result: { case: "error", value: { path, error: content } } } }];
      const tree = buildDirectoryTree(path, content);
      return [{ case: "lsResult", value: { result: { case: "success", value: { directoryTreeRoot: tree } } } }];
    }
    case "grepArgs": {
      if (isError) return [{ case: "grepResult", value: { result: { case: "error", value: { error: content } } } }];
      const args = exec.value;
      const globOnly = args.pattern === "" && args.glob !== undefined;
      const mode = globOnly ? "files_with_matches" : (args.outputMode ?? "content");
      return [grepSuccess(args, parseGrepOutput(content, mode), mode)];
    }
    case "fetchArgs": {
      const url = exec.value.url;
      if (isError)
        return [{ case: "fetchResult", value: { result: { case: "error", value: { url, error: content } } } }];
      const success = { url, content, statusCode: 200, contentType: "text/plain" };
      return [{ case: "fetchResult", value: { result: { case: "success", value: success } } }];
    }
    case "diagnosticsArgs": {
      const path = exec.value.path;
      if (isError) {
        return [{ case: "diagnosticsResult", value: { result: { case: "error", value: { path, error: content } } } }];
      }
      const diagnostics = outputLines(content).map((message) => ({ message, severity: 3 }));
      const success = { path, diagnostics, totalDiagnostics: diagnostics.length };
      return [{ case: "diagnosticsResult", value: { result: { case: "success", value: success } } }];
    }
    default:
      return rejectNativeExec(exec, "No result conversion for this exec type.");
  }
}

/**
 * The typed answer to a native exec nobody can run (§5.1): rejected/error cases per type, an empty result of the
 * matching case for the rest. cursor-bridge never executes anything locally.
 */
export function rejectNativeExec(exec: ExecCase, reason: string): ExecResultInit[] {
  switch (exec.case) {
    case "readArgs":
      return [
        { case: "readResult", value: { result: { case: "rejected", value: { path: exec.value.path, reason } } } },
      ];
    case "writeArgs":
      return [
        { case: "writeResult", value: { result: { case: "rejected", value: { path: exec.value.path, reason } } } },
      ];
    case "deleteArgs":
      return [
        { case: "deleteResult", value: { result: { case: "rejected", value: { path: exec.value.path, reason } } } },
      ];
    case "lsArgs":
      return [{ case: "lsResult", value: { result: { case: "rejected", value: { path: exec.value.path, reason } } } }];
    case "grepArgs":
      return [{ case: "grepResult", value: { result: { case: "error", value: { error: reason } } } }];
    case "fetchArgs":
      return [
        { case: "fetchResult", value: { result: { case: "error", value: { url: exec.value.url, error: reason } } } },
      ];
    case "shellArgs": {
      const rejected = { command: exec.value.command, workingDirectory: exec.value.workingDirectory, reason };
      return [{ case: "shellResult", value: { result: { case: "rejected", value: rejected } } }];
    }
    case "shellStreamArgs": {
      const rejected = { command: exec.value.command, workingDirectory: exec.value.workingDirectory, reason };
      return [{ case: "shellStream", value: { event: { case: "rejected", value: rejected } } }];
    }
    case "backgroundShellSpawnArgs": {
      const rejected = { command: exec.value.command, workingDirectory: exec.value.workingDirectory, reason };
      return [{ case: "backgroundShellSpawnResult", value: { result: { case: "rejected", value: rejected } } }];
    }
    case "writeShellStdinArgs":
      return [{ case: "writeShellStdinResult", value: { result: { case: "error", value: { error: reason } } } }];
    case "diagnosticsArgs":
      return [{ case: "diagnosticsResult", value: {} }];
    case "listMcpResourcesExecArgs":
      return [{ case: "listMcpResourcesExecResult", value: { result: { case: "rejected", value: { reason } } } }];
    case "readMcpResourceExecArgs": {
      const rejected = { uri: exec.value.uri, reason };
      return [{ case: "readMcpResourceExecResult", value: { result: { case: "rejected", value: rejected } } }];
    }
    // The addendum gives these results their error cases, so the model reads why instead of an empty result.
    case "recordScreenArgs":
      return [{ case: "recordScreenResult", value: { result: { case: "failure", value: { error: reason } } } }];
    case "computerUseArgs":
      return [{ case: "computerUseResult", value: { result: { case: "error", value: { error: reason } } } }];
    case "executeHookArgs":
      return [{ case: "executeHookResult", value: {} }];
    case "mcpArgs":
      return [{ case: "mcpResult", value: { result: { case: "rejected", value: { reason } } } }];
    case "requestContextArgs":
      return [{ case: "requestContextResult", value: { result: { case: "rejected", value: { reason } } } }];
    case undefined:
      return [];
  }
}
