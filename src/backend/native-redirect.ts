/**
 * Redirects Cursor's native execs to the caller's equivalent tools (docs/protocol.md §5.2: Cursor models call
 * their built-in tools before MCP tools, so EPH maps them onto the client's tools). The table below picks the first
 * declared caller tool by name (case-insensitive); arguments are built under the names the tool's JSON Schema
 * declares. cursor-bridge never executes anything itself: no equivalent tool means a typed rejection (§5.1).
 */

import type { ExecCase } from "./native-results.js";
import type { ClientTool, JsonValue } from "./types.js";

/** Caller tool names tried for each native exec, in order of preference. */
export const NATIVE_TOOL_TABLE = {
  shell: ["bash", "shell"],
  read: ["read", "read_file"],
  write: ["write", "write_file"],
  ls: ["glob", "ls", "list"],
  grep: ["grep"],
  glob: ["glob"],
  fetch: ["webfetch", "fetch", "web_fetch"],
  delete: ["delete"],
  diagnostics: ["diagnostics"],
} as const satisfies Record<string, readonly string[]>;

/** A native exec mapped onto a caller tool. */
export interface NativeRedirect {
  /** The caller's exact tool name. */
  toolName: string;
  /** JSON text of the arguments. */
  arguments: string;
  /** The native args' `tool_call_id` (may be empty). */
  nativeToolCallId: string;
}

/** One argument: the names it may go under (first match in the schema wins) and its value. */
interface ArgumentCandidate {
  names: readonly string[];
  value: JsonValue;
  /** Only sent when the tool's schema declares one of the names. */
  optional?: boolean;
  /** For an optional argument the schema lacks: carries its meaning in the arguments built so far instead. */
  otherwise?: (built: { [key: string]: JsonValue }) => void;
}

/** `text` as one POSIX shell word (single-quoted). */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function findTool(tools: readonly ClientTool[], names: readonly string[]): ClientTool | undefined {
  for (const name of names) {
    const tool = tools.find((t) => t.name.toLowerCase() === name);
    if (tool !== undefined) return tool;
  }
  return undefined;
}

function declaredProperties(tool: ClientTool): Set<string> {
  const properties = tool.inputSchema.properties;
  if (properties === null || typeof properties !== "object" || Array.isArray(properties)) return new Set();
  return new Set(Object.keys(properties));
}

/** Builds the arguments object under the names the tool declares. */
export function buildArguments(
  tool: ClientTool,
  candidates: readonly ArgumentCandidate[],
): { [key: string]: JsonValue } {
  const declared = declaredProperties(tool);
  const out: { [key: string]: JsonValue } = {};
  for (const candidate of candidates) {
    const match = candidate.names.find((name) => declared.has(name));
    if (match !== undefined) out[match] = candidate.value;
    else if (!candidate.optional) out[candidate.names[0] ?? "value"] = candidate.value;
    else candidate.otherwise?.(out);
  }
  return out;
}

const PATH_NAMES = ["filePath", "file_path", "path"] as const;

interface Mapping {
  toolNames: readonly string[];
  candidates: ArgumentCandidate[];
  nativeToolCallId: string;
}

function mappingFor(exec: ExecCase): Mapping | undefined {
  switch (exec.case) {
    case "shellArgs":
    case "shellStreamArgs": {
      const { command, workingDirectory, toolCallId } = exec.value;
      const candidates: ArgumentCandidate[] = [
        { names: ["command", "cmd"], value: command },
        { names: ["description"], value: `Run: ${command}`.slice(0, 200), optional: true },
      ];
      if (workingDirectory !== "")
        candidates.push({
          names: ["workdir", "cwd"],
          value: workingDirectory,
          optional: true,
          // A tool without a folder argument runs in the client's folder: the command changes to Cursor's first.
          otherwise: (built) => {
            const key = "command" in built ? "command" : "cmd";
            built[key] = `cd ${shellQuote(workingDirectory)} && ${String(built[key])}`;
          },
        });
      return { toolNames: NATIVE_TOOL_TABLE.shell, candidates, nativeToolCallId: toolCallId };
    }
    case "readArgs":
      return {
        toolNames: NATIVE_TOOL_TABLE.read,
        candidates: [{ names: PATH_NAMES, value: exec.value.path }],
        nativeToolCallId: exec.value.toolCallId,
      };
    case "writeArgs":
      return {
        toolNames: NATIVE_TOOL_TABLE.write,
        candidates: [
          { names: PATH_NAMES, value: exec.value.path },
          { names: ["content", "text", "file_text"], value: exec.value.fileText },
        ],
        nativeToolCallId: exec.value.toolCallId,
      };
    case "deleteArgs":
      return {
        toolNames: NATIVE_TOOL_TABLE.delete,
        candidates: [{ names: PATH_NAMES, value: exec.value.path }],
        nativeToolCallId: exec.value.toolCallId,
      };
    case "diagnosticsArgs":
      return {
        toolNames: NATIVE_TOOL_TABLE.diagnostics,
        candidates: [{ names: PATH_NAMES, value: exec.value.path }],
        nativeToolCallId: exec.value.toolCallId,
      };
    case "fetchArgs":
      return {
        toolNames: NATIVE_TOOL_TABLE.fetch,
        candidates: [
          { names: ["url"], value: exec.value.url },
          { names: ["format"], value: "markdown", optional: true },
        ],
        nativeToolCallId: exec.value.toolCallId,
      };
    case "lsArgs":
    case "grepArgs":
      return searchMapping(exec);
    default:
      return undefined;
  }
}

function searchMapping(exec: ExecCase & { case: "lsArgs" | "grepArgs" }): Mapping {
  if (exec.case === "lsArgs") {
    // glob lists files (recursively) under the path; ls/list tools take the directory itself.
    return {
      toolNames: NATIVE_TOOL_TABLE.ls,
      candidates: [
        { names: ["pattern"], value: "**/*", optional: true },
        { names: ["path", "dirPath", "directory"], value: exec.value.path },
      ],
      nativeToolCallId: exec.value.toolCallId,
    };
  }
  const args = exec.value;
  const path: ArgumentCandidate[] = args.path === undefined ? [] : [{ names: ["path"], value: args.path }];
  if (args.pattern === "" && args.glob !== undefined) {
    // GrepArgs with an empty pattern and a glob is a glob exec (§4.7).
    return {
      toolNames: NATIVE_TOOL_TABLE.glob,
      candidates: [{ names: ["pattern", "glob"], value: args.glob }, ...path],
      nativeToolCallId: args.toolCallId,
    };
  }
  const candidates: ArgumentCandidate[] = [{ names: ["pattern", "regex", "query"], value: args.pattern }, ...path];
  if (args.glob !== undefined) candidates.push({ names: ["include", "glob"], value: args.glob, optional: true });
  if (args.caseInsensitive === true) candidates.push({ names: ["-i", "ignoreCase"], value: true, optional: true });
  return { toolNames: NATIVE_TOOL_TABLE.grep, candidates, nativeToolCallId: args.toolCallId };
}

/** The caller tool call for a native exec, or undefined when no declared tool is equivalent. */
export function redirectNativeExec(exec: ExecCase, tools: readonly ClientTool[]): NativeRedirect | undefined {
  const mapping = mappingFor(exec);
  if (mapping === undefined) return undefined;
  const tool = findTool(tools, mapping.toolNames);
  if (tool === undefined) return undefined;
  return {
    toolName: tool.name,
    arguments: JSON.stringify(buildArguments(tool, mapping.candidates)),
    nativeToolCallId: mapping.nativeToolCallId,
  };
}
