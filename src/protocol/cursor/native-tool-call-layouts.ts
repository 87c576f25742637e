/**
 * The layouts (native-tool-layouts.ts) of the results a completed call of Cursor's own tools carries, of the `ToolCall`
 * cases, of the tool-call updates and of the server message holding them or an exec: what native-tool-decode.ts reads.
 * A result or `ToolCall` case not listed is left to `fromBinary`.
 */
import {
  BOOL,
  BYTES,
  DeleteArgs,
  EditArgs,
  ExecServerMessage,
  FetchArgs,
  type FieldSpec,
  GlobToolArgs,
  GrepArgs,
  INT32,
  INT64,
  id,
  ListMcpResourcesExecArgs,
  LsArgs,
  type MessageLayout,
  ReadMcpResourceExecArgs,
  ReadToolArgs,
  SandboxPolicy,
  SELF,
  SemSearchToolArgs,
  ShellArgs,
  STRING,
  TodoItem,
  UINT32,
  UINT64,
  UpdateTodosArgs,
  WebFetchArgs,
} from "./native-tool-layouts.js";

// The results a completed call carries (docs/protocol.md §4.10).
const OutputLocation = id("OutputLocation", [1, "filePath", STRING], [2, "sizeBytes", INT64], [3, "lineCount", INT64]);
const shellOutcome = (more: FieldSpec[]): FieldSpec[] => [
  [1, "command", STRING],
  [2, "workingDirectory", STRING],
  [3, "exitCode", INT32],
  [4, "signal", STRING],
  [5, "stdout", STRING],
  [6, "stderr", STRING],
  [7, "executionTime", INT32],
  [8, "outputLocation", OutputLocation],
  ...more,
];
const ShellSuccess = id(
  "ShellSuccess",
  ...shellOutcome([
    [9, "shellId", UINT32, "?"],
    [10, "interleavedOutput", STRING],
    [11, "pid", UINT32, "?"],
    [12, "msToWait", INT32, "?"],
  ]),
);
const ShellFailure = id(
  "ShellFailure",
  ...shellOutcome([
    [9, "interleavedOutput", STRING],
    [10, "abortReason", INT32],
    [11, "aborted", BOOL],
  ]),
);
const ShellTimeout = id(
  "ShellTimeout",
  [1, "command", STRING],
  [2, "workingDirectory", STRING],
  [3, "timeoutMs", INT32],
);
const shellRefusal = (third: FieldSpec): FieldSpec[] => [
  [1, "command", STRING],
  [2, "workingDirectory", STRING],
  third,
  [4, "isReadonly", BOOL],
];
const ShellRejected = id("ShellRejected", ...shellRefusal([3, "reason", STRING]));
const ShellSpawnError = id(
  "ShellSpawnError",
  [1, "command", STRING],
  [2, "workingDirectory", STRING],
  [3, "error", STRING],
);
const ShellPermissionDenied = id("ShellPermissionDenied", ...shellRefusal([3, "error", STRING]));
const ShellResult = id(
  "ShellResult",
  [1, "success", ShellSuccess, "result"],
  [2, "failure", ShellFailure, "result"],
  [3, "timeout", ShellTimeout, "result"],
  [4, "rejected", ShellRejected, "result"],
  [5, "spawnError", ShellSpawnError, "result"],
  [7, "permissionDenied", ShellPermissionDenied, "result"],
  [101, "sandboxPolicy", SandboxPolicy],
  [102, "isBackground", BOOL, "?"],
  [103, "terminalsFolder", STRING, "?"],
  [104, "pid", UINT32, "?"],
);
const ReadRange = id("ReadRange", [1, "startLine", UINT32], [2, "endLine", UINT32]);
const ReadToolSuccess = id(
  "ReadToolSuccess",
  [1, "content", STRING, "output"],
  [6, "data", BYTES, "output"],
  [9, "dataBlobId", BYTES, "output"],
  [10, "contentBlobId", BYTES, "output"],
  [2, "isEmpty", BOOL],
  [3, "exceededLimit", BOOL],
  [4, "totalLines", UINT32],
  [5, "fileSize", UINT32],
  [7, "path", STRING],
  [8, "readRange", ReadRange],
  [11, "includeLineNumbers", BOOL, "?"],
);
const ReadToolError = id("ReadToolError", [1, "errorMessage", STRING]);
const ReadToolResult = id(
  "ReadToolResult",
  [1, "success", ReadToolSuccess, "result"],
  [2, "error", ReadToolError, "result"],
);
const EditSuccess = id(
  "EditSuccess",
  [1, "path", STRING],
  [3, "linesAdded", INT32, "?"],
  [4, "linesRemoved", INT32, "?"],
  [5, "diffString", STRING, "?"],
  [6, "beforeFullFileContent", STRING, "?"],
  [7, "afterFullFileContent", STRING],
  [8, "message", STRING],
);
const EditError = id("EditError", [1, "path", STRING], [2, "error", STRING], [5, "modelVisibleError", STRING, "?"]);
const EditResult = id("EditResult", [1, "success", EditSuccess, "result"], [7, "error", EditError, "result"]);
const FetchSuccess = id(
  "FetchSuccess",
  [1, "url", STRING],
  [2, "content", STRING],
  [3, "statusCode", INT32],
  [4, "contentType", STRING],
);
const FetchError = id("FetchError", [1, "url", STRING], [2, "error", STRING]);
const FetchResult = id("FetchResult", [1, "success", FetchSuccess, "result"], [2, "error", FetchError, "result"]);

const LsDirectoryTreeFile = id("LsDirectoryTreeFile", [1, "name", STRING]);
const LsDirectoryTreeNode = id(
  "LsDirectoryTreeNode",
  [1, "absPath", STRING],
  [2, "childrenDirs", SELF, "[]"],
  [3, "childrenFiles", LsDirectoryTreeFile, "[]"],
  [4, "childrenWereProcessed", BOOL],
  [5, "fullSubtreeExtensionCounts", INT32, "{}"],
  [6, "numFiles", INT32],
);
const LsSuccess = id("LsSuccess", [1, "directoryTreeRoot", LsDirectoryTreeNode]);
const LsError = id("LsError", [1, "path", STRING], [2, "error", STRING]);
const LsResult = id("LsResult", [1, "success", LsSuccess, "result"], [2, "error", LsError, "result"]);
const searchTotals = (from: number, names: string[]): FieldSpec[] => [
  ...names.map((name, i): FieldSpec => [from + i, name, INT32]),
  [from + names.length, "clientTruncated", BOOL],
  [from + names.length + 1, "ripgrepTruncated", BOOL],
];
const GrepFileCount = id("GrepFileCount", [1, "file", STRING], [2, "count", INT32]);
const GrepCountResult = id(
  "GrepCountResult",
  [1, "counts", GrepFileCount, "[]"],
  ...searchTotals(2, ["totalFiles", "totalMatches"]),
);
const GrepFilesResult = id("GrepFilesResult", [1, "files", STRING, "[]"], ...searchTotals(2, ["totalFiles"]));
const GrepContentMatch = id(
  "GrepContentMatch",
  [1, "lineNumber", INT32],
  [2, "content", STRING],
  [3, "contentTruncated", BOOL],
  [4, "isContextLine", BOOL],
);
const GrepFileMatch = id("GrepFileMatch", [1, "file", STRING], [2, "matches", GrepContentMatch, "[]"]);
const GrepContentResult = id(
  "GrepContentResult",
  [1, "matches", GrepFileMatch, "[]"],
  ...searchTotals(2, ["totalLines", "totalMatchedLines"]),
);
const GrepUnionResult = id(
  "GrepUnionResult",
  [1, "count", GrepCountResult, "result"],
  [2, "files", GrepFilesResult, "result"],
  [3, "content", GrepContentResult, "result"],
);
const GrepSuccess = id(
  "GrepSuccess",
  [1, "pattern", STRING],
  [2, "path", STRING],
  [3, "outputMode", STRING],
  [4, "workspaceResults", GrepUnionResult, "{}"],
  [5, "activeEditorResult", GrepUnionResult],
);
const GrepError = id("GrepError", [1, "error", STRING]);
const GrepResult = id("GrepResult", [1, "success", GrepSuccess, "result"], [2, "error", GrepError, "result"]);

const TodosSuccess = id(
  "UpdateTodosSuccess",
  [1, "todos", TodoItem, "[]"],
  [2, "totalCount", INT32],
  [3, "wasMerge", BOOL],
);
const UpdateTodosResult = id("UpdateTodosResult", [1, "success", TodosSuccess, "result"]);
const SemSearchToolResult = id("SemSearchToolResult", [
  1,
  "success",
  id("SemSearchToolSuccess", [1, "results", STRING], [2, "codeResults", BYTES, "[]"]),
  "result",
]);
const GlobToolSuccess = id(
  "GlobToolSuccess",
  [1, "pattern", STRING],
  [2, "path", STRING],
  [3, "files", STRING, "[]"],
  ...searchTotals(4, ["totalFiles"]),
);
const GlobToolResult = id(
  "GlobToolResult",
  [1, "success", GlobToolSuccess, "result"],
  [2, "error", id("GlobToolError", [1, "error", STRING]), "result"],
);
const DeleteSuccess = id(
  "DeleteSuccess",
  [1, "path", STRING],
  [2, "deletedFile", STRING],
  [3, "fileSize", INT64],
  [4, "prevContent", STRING],
);
const DeleteResult = id("DeleteResult", [1, "success", DeleteSuccess, "result"]);

/** A `ToolCall` case: its args (1), and its result (2) when read here. */
const toolCase = (name: string, args: MessageLayout, result?: MessageLayout) =>
  id(name, [1, "args", args], ...(result === undefined ? [] : [[2, "result", result] as const]));
const ToolCall = id(
  "ToolCall",
  [1, "shellToolCall", toolCase("ShellToolCall", ShellArgs, ShellResult), "tool"],
  [3, "deleteToolCall", toolCase("DeleteToolCall", DeleteArgs, DeleteResult), "tool"],
  [4, "globToolCall", toolCase("GlobToolCall", GlobToolArgs, GlobToolResult), "tool"],
  [5, "grepToolCall", toolCase("GrepToolCall", GrepArgs, GrepResult), "tool"],
  [8, "readToolCall", toolCase("ReadToolCall", ReadToolArgs, ReadToolResult), "tool"],
  [9, "updateTodosToolCall", toolCase("UpdateTodosToolCall", UpdateTodosArgs, UpdateTodosResult), "tool"],
  [12, "editToolCall", toolCase("EditToolCall", EditArgs, EditResult), "tool"],
  [13, "lsToolCall", toolCase("LsToolCall", LsArgs, LsResult), "tool"],
  [16, "semSearchToolCall", toolCase("SemSearchToolCall", SemSearchToolArgs, SemSearchToolResult), "tool"],
  [20, "listMcpResourcesToolCall", toolCase("ListMcpResourcesToolCall", ListMcpResourcesExecArgs), "tool"],
  [21, "readMcpResourceToolCall", toolCase("ReadMcpResourceToolCall", ReadMcpResourceExecArgs), "tool"],
  [24, "fetchToolCall", toolCase("FetchToolCall", FetchArgs, FetchResult), "tool"],
  [37, "webFetchToolCall", toolCase("WebFetchToolCall", WebFetchArgs), "tool"],
  [57, "toolCallId", STRING],
  [59, "startedAtMs", UINT64, "?"],
  [60, "completedAtMs", UINT64, "?"],
);
const update = (name: string, ...specs: FieldSpec[]) =>
  id(name, [1, "callId", STRING], [2, "toolCall", ToolCall], ...specs);
const InteractionUpdate = id(
  "InteractionUpdate",
  [2, "toolCallStarted", update("ToolCallStartedUpdate", [3, "modelCallId", STRING]), "message"],
  [3, "toolCallCompleted", update("ToolCallCompletedUpdate", [3, "modelCallId", STRING]), "message"],
  [
    7,
    "partialToolCall",
    update("PartialToolCallUpdate", [3, "argsTextDelta", STRING], [4, "modelCallId", STRING]),
    "message",
  ],
  [25, "messageStartedAtMs", UINT64, "?"],
);

/** `AgentServerMessage` holding one of the interaction updates or exec args above. */
export const SERVER_MESSAGE: MessageLayout = id(
  "AgentServerMessage",
  [1, "interactionUpdate", InteractionUpdate, "message"],
  [2, "execServerMessage", ExecServerMessage, "message"],
);
