/**
 * The messages native-tool-decode.ts reads, written out by hand from proto/agent/v1: each field's number, TypeScript
 * name and type, and whether it is repeated, a map, has explicit presence or belongs to a oneof. This file holds how
 * layouts are written and the args of Cursor's own tools (their execs' and their `ToolCall`s'); the results and the
 * messages around them are in native-tool-call-layouts.ts. A message lists every field that has a default (a proto3
 * scalar without `optional`, a list, a map), as its defaults come from here; a oneof lists only the cases read, and a
 * message field or an `optional` scalar may be left out: a field left out is one the decoder does not know, and the
 * message goes to `fromBinary`. native-tool-decode.test.ts checks every layout against the generated schema.
 */

/** Scalar types: how the value is read, and its default. */
export const STRING = 0;
export const BYTES = 1;
export const BOOL = 2;
/** int32 and enums. */
export const INT32 = 3;
export const UINT32 = 4;
export const INT64 = 5;
export const UINT64 = 6;
export type Scalar =
  | typeof STRING
  | typeof BYTES
  | typeof BOOL
  | typeof INT32
  | typeof UINT32
  | typeof INT64
  | typeof UINT64;

export interface FieldLayout {
  readonly no: number;
  readonly localName: string;
  /** A scalar type, or a message's layout; of a map, its values' (its keys are strings). */
  readonly type: Scalar | MessageLayout;
  /** A repeated field (of strings, bytes or messages: a packed list is not read here). */
  readonly list: boolean;
  /** A `map<string, type>` field. */
  readonly map: boolean;
  /** A singular message or a proto3 `optional` scalar: absent until set. */
  readonly explicit: boolean;
  /** The TypeScript name of the oneof it belongs to. */
  readonly oneof: string | undefined;
  /** The field's tag as a varint value (number << 3 | wire type). */
  readonly tag: number;
  /** Of a map, its entries' value tag (2 << 3 | wire type). */
  readonly valueTag: number;
}

export interface MessageLayout {
  readonly typeName: string;
  readonly fields: readonly FieldLayout[];
  /** Fields by number. */
  readonly byNumber: ReadonlyMap<number, FieldLayout>;
  /** The TypeScript names of its oneofs. */
  readonly oneofs: readonly string[];
}

/** The type of a field holding the message being described (a tree's children). */
export const SELF = "self";

/**
 * `[number, name, type, "[]" (repeated) | "{}" (a map with string keys) | "?" (optional) | oneof name]`; a message
 * field is always explicit.
 */
export type FieldSpec = readonly [number, string, Scalar | MessageLayout | typeof SELF, string?];

const wireType = (type: Scalar | MessageLayout) =>
  typeof type !== "number" || type === STRING || type === BYTES ? 2 : 0;

function message(typeName: string, specs: readonly FieldSpec[]): MessageLayout {
  const fields: FieldLayout[] = [];
  const oneofs: string[] = [];
  const layout: MessageLayout = { typeName, fields, byNumber: new Map(), oneofs };
  for (const [no, localName, spec, mode] of specs) {
    const type = spec === SELF ? layout : spec;
    const list = mode === "[]";
    const map = mode === "{}";
    if (list && wireType(type) === 0) throw new Error(`${typeName}.${localName}: packed list`);
    const oneof = mode === undefined || list || map || mode === "?" ? undefined : mode;
    const explicit = !list && !map && oneof === undefined && (typeof type !== "number" || mode === "?");
    const tag = no * 8 + (map ? 2 : wireType(type));
    fields.push({ no, localName, type, list, map, explicit, oneof, tag, valueTag: 2 * 8 + wireType(type) });
  }
  for (const field of fields) {
    (layout.byNumber as Map<number, FieldLayout>).set(field.no, field);
    if (field.oneof !== undefined && !oneofs.includes(field.oneof)) oneofs.push(field.oneof);
  }
  return layout;
}

/** The layout of `agent.v1.<name>`. */
export const id = (typeName: string, ...specs: FieldSpec[]) => message(`agent.v1.${typeName}`, specs);

// Exec args (docs/protocol.md §5.1).
export const SandboxPolicy = id(
  "SandboxPolicy",
  [1, "type", INT32],
  [2, "networkAccess", BOOL, "?"],
  [3, "additionalReadwritePaths", STRING, "[]"],
  [4, "additionalReadonlyPaths", STRING, "[]"],
  [5, "debugOutputDir", STRING, "?"],
  [6, "blockGitWrites", BOOL, "?"],
  [7, "disableTmpWrite", BOOL, "?"],
  [8, "allowlistEscalated", BOOL, "?"],
  [9, "enableSharedBuildCache", BOOL, "?"],
);
const ShellCommandArg = id("ShellCommandArg", [1, "type", STRING], [2, "value", STRING]);
const ShellExecutableCommand = id(
  "ShellExecutableCommand",
  [1, "name", STRING],
  [2, "args", ShellCommandArg, "[]"],
  [3, "fullText", STRING],
);
const ShellCommandParsingResult = id(
  "ShellCommandParsingResult",
  [1, "parsingFailed", BOOL],
  [2, "executableCommands", ShellExecutableCommand, "[]"],
  [3, "hasRedirects", BOOL],
  [4, "hasCommandSubstitution", BOOL],
);
export const ShellArgs = id(
  "ShellArgs",
  [1, "command", STRING],
  [2, "workingDirectory", STRING],
  [3, "timeout", INT32],
  [4, "toolCallId", STRING],
  [5, "simpleCommands", STRING, "[]"],
  [6, "hasInputRedirect", BOOL],
  [7, "hasOutputRedirect", BOOL],
  [8, "parsingResult", ShellCommandParsingResult],
  [9, "requestedSandboxPolicy", SandboxPolicy],
  [10, "fileOutputThresholdBytes", UINT64, "?"],
  [11, "isBackground", BOOL],
  [12, "skipApproval", BOOL],
  [13, "timeoutBehavior", INT32],
  [14, "hardTimeout", INT32, "?"],
);
const WriteArgs = id(
  "WriteArgs",
  [1, "path", STRING],
  [2, "fileText", STRING],
  [3, "toolCallId", STRING],
  [4, "returnFileContentAfterWrite", BOOL],
  [5, "fileBytes", BYTES],
);
export const DeleteArgs = id("DeleteArgs", [1, "path", STRING], [2, "toolCallId", STRING]);
export const GrepArgs = id(
  "GrepArgs",
  [1, "pattern", STRING],
  [2, "path", STRING, "?"],
  [3, "glob", STRING, "?"],
  [4, "outputMode", STRING, "?"],
  [5, "contextBefore", INT32, "?"],
  [6, "contextAfter", INT32, "?"],
  [7, "context", INT32, "?"],
  [8, "caseInsensitive", BOOL, "?"],
  [9, "type", STRING, "?"],
  [10, "headLimit", INT32, "?"],
  [11, "multiline", BOOL, "?"],
  [12, "sort", STRING, "?"],
  [13, "sortAscending", BOOL, "?"],
  [14, "toolCallId", STRING],
  [15, "sandboxPolicy", SandboxPolicy],
);
const ReadArgs = id("ReadArgs", [1, "path", STRING], [2, "toolCallId", STRING]);
export const LsArgs = id(
  "LsArgs",
  [1, "path", STRING],
  [2, "ignore", STRING, "[]"],
  [3, "toolCallId", STRING],
  [4, "sandboxPolicy", SandboxPolicy],
  [5, "timeoutMs", UINT32, "?"],
);
export const FetchArgs = id("FetchArgs", [1, "url", STRING], [2, "toolCallId", STRING]);
export const ListMcpResourcesExecArgs = id("ListMcpResourcesExecArgs", [1, "server", STRING, "?"]);
export const ReadMcpResourceExecArgs = id(
  "ReadMcpResourceExecArgs",
  [1, "server", STRING],
  [2, "uri", STRING],
  [3, "downloadPath", STRING, "?"],
);
const SpanContext = id(
  "SpanContext",
  [1, "traceId", STRING],
  [2, "spanId", STRING],
  [3, "traceFlags", UINT32, "?"],
  [4, "traceState", STRING, "?"],
);
export const ExecServerMessage = id(
  "ExecServerMessage",
  [1, "id", UINT32],
  [2, "shellArgs", ShellArgs, "message"],
  [3, "writeArgs", WriteArgs, "message"],
  [4, "deleteArgs", DeleteArgs, "message"],
  [5, "grepArgs", GrepArgs, "message"],
  [7, "readArgs", ReadArgs, "message"],
  [8, "lsArgs", LsArgs, "message"],
  [14, "shellStreamArgs", ShellArgs, "message"],
  [17, "listMcpResourcesExecArgs", ListMcpResourcesExecArgs, "message"],
  [18, "readMcpResourceExecArgs", ReadMcpResourceExecArgs, "message"],
  [20, "fetchArgs", FetchArgs, "message"],
  [15, "execId", STRING],
  [19, "spanContext", SpanContext],
);

// The args of the `ToolCall` cases (docs/protocol.md §4.6) that are not exec args.
export const GlobToolArgs = id("GlobToolArgs", [1, "targetDirectory", STRING, "?"], [2, "globPattern", STRING]);
export const ReadToolArgs = id(
  "ReadToolArgs",
  [1, "path", STRING],
  [2, "offset", INT32, "?"],
  [3, "limit", INT32, "?"],
  [5, "includeLineNumbers", BOOL, "?"],
);
export const EditArgs = id("EditArgs", [1, "path", STRING], [6, "streamContent", STRING, "?"]);
export const SemSearchToolArgs = id(
  "SemSearchToolArgs",
  [1, "query", STRING],
  [2, "targetDirectories", STRING, "[]"],
  [3, "explanation", STRING],
);
export const TodoItem = id(
  "TodoItem",
  [1, "id", STRING],
  [2, "content", STRING],
  [3, "status", INT32],
  [4, "createdAt", INT64],
  [5, "updatedAt", INT64],
  [6, "dependencies", STRING, "[]"],
);
export const UpdateTodosArgs = id("UpdateTodosArgs", [1, "todos", TodoItem, "[]"], [2, "merge", BOOL]);
export const WebFetchArgs = id("WebFetchArgs", [1, "url", STRING], [2, "toolCallId", STRING]);
