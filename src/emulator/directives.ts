/**
 * Parser of the scripted model's directives, written in the last user message as `[[emu:KEYWORD …]]`.
 * The syntax is a public contract (docs/emulator.md, outside checks), so it is parsed strictly: anything malformed is reported
 * as a problem instead of being guessed at.
 */

import { ErrorDetails_Error } from "../gen/aiserver/v1/error_pb.js";

/** The enum names of `aiserver.v1.ErrorDetails.Error`, without their `ERROR_` prefix. */
const ERROR_ENUM_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(ErrorDetails_Error).filter((key) => Number.isNaN(Number(key))),
  // The E6 kinds spelt otherwise in ErrorDetails (errors.ts ERROR_NAME_ALIASES).
  "IMAGE_TOO_LARGE",
  "CONTENT_POLICY",
]);

/** Native exec kinds a `[[emu:native KIND …]]` directive may name. */
export const NATIVE_KINDS = ["shell", "read", "ls", "grep", "write", "fetch"] as const;
/** A native exec kind. */
export type NativeKind = (typeof NATIVE_KINDS)[number];

/** Error codes a `[[emu:error CODE]]` directive may name. */
export const ERROR_CODES = ["usage_limit", "unauthenticated", "outdated_client", "internal", "blob_not_found"] as const;
/**
 * A scripted error: one of the named codes above, or any `aiserver.v1.ErrorDetails.Error` value by its enum name
 * (`[[emu:error MODEL_BLOCKED]]` or `ERROR_MODEL_BLOCKED`, upper case; `retryable` adds `is_retryable: true`).
 */
export type ScriptedErrorCode = (typeof ERROR_CODES)[number] | { name: string; retryable: boolean };

/** JSON object arguments of a tool directive. */
export type JsonObject = { [key: string]: unknown };

/** One parsed directive. */
export type Directive =
  | { kind: "tool"; name: string; args: JsonObject }
  | { kind: "native"; native: NativeKind; args: JsonObject }
  | { kind: "think"; tokens: number }
  | { kind: "tokens"; tokens: number }
  | { kind: "cached"; tokens: number }
  | { kind: "rate"; tokensPerSecond: number }
  | { kind: "recall" }
  | { kind: "echo-model" }
  | { kind: "describe-image" }
  | { kind: "error"; code: ScriptedErrorCode }
  | { kind: "stall"; afterTokens: number }
  | { kind: "drop"; afterTokens: number }
  | { kind: "overflow"; once?: true }
  | { kind: "truncate" }
  | { kind: "then" }
  | { kind: "abort-exec"; afterMs: number }
  | { kind: "slow-cancel"; afterMs: number }
  | { kind: "tool-chunks"; size: number }
  | { kind: "tool-gap"; gapMs: number }
  | { kind: "tool-cut"; call: number }
  | { kind: "tool-count"; count: number }
  | { kind: "tool-listed-after"; call: number }
  | { kind: "tool-args-id"; call?: number }
  | { kind: "todos"; todos: ScriptedTodo[] }
  | { kind: "task"; task: ScriptedTask }
  | { kind: "web-search"; query: string }
  | { kind: "web-fetch"; url: string }
  | { kind: "switch-mode"; mode: string; explanation: string };

/**
 * Every directive keyword with the shape of its arguments and one example that parses: the table `emulator --help`,
 * an unknown keyword's error and docs/emulator.md are checked against (test/docs/docs.test.ts).
 */
export const DIRECTIVES: ReadonlyArray<{ keyword: string; syntax: string; example: string }> = [
  { keyword: "tool", syntax: "tool NAME {json args}", example: '[[emu:tool bash {"command":"ls"}]]' },
  { keyword: "native", syntax: "native KIND {json args}", example: '[[emu:native read {"path":"/tmp/a.txt"}]]' },
  { keyword: "echo-model", syntax: "echo-model", example: "[[emu:echo-model]]" },
  { keyword: "think", syntax: "think N", example: "[[emu:think 7]]" },
  { keyword: "cached", syntax: "cached N", example: "[[emu:cached 40]]" },
  { keyword: "tokens", syntax: "tokens N", example: "[[emu:tokens 5]]" },
  { keyword: "rate", syntax: "rate TPS", example: "[[emu:rate 50]]" },
  { keyword: "recall", syntax: "recall", example: "[[emu:recall]]" },
  { keyword: "describe-image", syntax: "describe-image", example: "[[emu:describe-image]]" },
  { keyword: "error", syntax: "error CODE", example: "[[emu:error usage_limit]]" },
  { keyword: "error", syntax: "error NAME", example: "[[emu:error MODEL_BLOCKED]]" },
  { keyword: "error", syntax: "error NAME retryable", example: "[[emu:error ERROR_MODEL_BLOCKED retryable]]" },
  { keyword: "stall", syntax: "stall N", example: "[[emu:stall 3]]" },
  { keyword: "drop", syntax: "drop N", example: "[[emu:drop 3]]" },
  { keyword: "overflow", syntax: "overflow", example: "[[emu:overflow]]" },
  { keyword: "overflow", syntax: "overflow once", example: "[[emu:overflow once]]" },
  { keyword: "truncate", syntax: "truncate", example: "[[emu:truncate]]" },
  { keyword: "then", syntax: "then", example: "[[emu:then]]" },
  { keyword: "abort-exec", syntax: "abort-exec MS", example: "[[emu:abort-exec 500]]" },
  { keyword: "slow-cancel", syntax: "slow-cancel MS", example: "[[emu:slow-cancel 1000]]" },
  { keyword: "tool-chunks", syntax: "tool-chunks N", example: "[[emu:tool-chunks 64]]" },
  { keyword: "tool-gap", syntax: "tool-gap MS", example: "[[emu:tool-gap 250]]" },
  { keyword: "tool-cut", syntax: "tool-cut N", example: "[[emu:tool-cut 1]]" },
  { keyword: "tool-count", syntax: "tool-count N", example: "[[emu:tool-count 3]]" },
  { keyword: "tool-listed-after", syntax: "tool-listed-after N", example: "[[emu:tool-listed-after 1]]" },
  { keyword: "tool-args-id", syntax: "tool-args-id", example: "[[emu:tool-args-id]]" },
  { keyword: "tool-args-id", syntax: "tool-args-id N", example: "[[emu:tool-args-id 2]]" },
  { keyword: "todos", syntax: 'todos {"TODO":"STATUS",…}', example: '[[emu:todos {"write tests":"in_progress"}]]' },
  {
    keyword: "task",
    syntax: 'task {"description":"…","steps":[{"read":"PATH"},{"grep":"PATTERN"},{"shell":"COMMAND"}]}',
    example: '[[emu:task {"description":"look around","steps":[{"read":"a.ts"},{"grep":"TODO"}]}]]',
  },
  { keyword: "web-search", syntax: "web-search QUERY", example: "[[emu:web-search node 22 release]]" },
  { keyword: "web-fetch", syntax: "web-fetch URL", example: "[[emu:web-fetch https://example.com/a]]" },
  {
    keyword: "switch-mode",
    syntax: "switch-mode MODE EXPLANATION",
    example: "[[emu:switch-mode plan The change needs a plan first.]]",
  },
];

/** One nested tool call of a `[[emu:task …]]` subagent. */
export type ScriptedTaskStep =
  | { tool: "read"; path: string }
  | { tool: "grep"; pattern: string }
  | { tool: "shell"; command: string };

/** A subagent Cursor's task tool runs (`[[emu:task …]]`). */
export interface ScriptedTask {
  description: string;
  steps: ScriptedTaskStep[];
}

/** Statuses a `[[emu:todos …]]` entry may have. */
export const TODO_STATUSES = ["pending", "in_progress", "completed", "cancelled"] as const;
/** One entry of Cursor's todo list. */
export interface ScriptedTodo {
  content: string;
  status: (typeof TODO_STATUSES)[number];
}

/** The message with its directives removed, the directives in order, and what could not be parsed. */
export interface ParsedMessage {
  text: string;
  directives: Directive[];
  problems: string[];
}

const OPEN = "[[emu:";
const CLOSE = "]]";

/** OpenCode's escape of a double quote inside an argument it wraps in quotes. */
const ESCAPED_QUOTE = '\\"';

/**
 * Parses every `[[emu:…]]` directive of a message; the remaining text is trimmed with runs of spaces collapsed.
 * `opencode run a "b c"` sends each argument holding a space wrapped in double quotes with every `"` inside written
 * `\"` (`"Hi [[emu:tool bash {\"command\":\"echo x\"}]]"`); when the message does not parse as written and holds
 * such escapes, it is parsed again with every `\"` turned back into `"` (the exact inverse of that quoting).
 */
export function parseDirectives(message: string): ParsedMessage {
  const parsed = parseMessage(message);
  if (parsed.problems.length === 0 || !message.includes(ESCAPED_QUOTE)) return parsed;
  const unquoted = parseMessage(message.replaceAll(ESCAPED_QUOTE, '"'));
  return unquoted.problems.length === 0 ? unquoted : parsed;
}

function parseMessage(message: string): ParsedMessage {
  const directives: Directive[] = [];
  const problems: string[] = [];
  let text = "";
  let cursor = 0;
  for (let start = message.indexOf(OPEN); start !== -1; start = message.indexOf(OPEN, cursor)) {
    text += message.slice(cursor, start);
    const end = findClose(message, start + OPEN.length);
    if (end === -1) {
      problems.push(`Unterminated directive at offset ${start}.`);
      cursor = message.length;
      break;
    }
    const body = message.slice(start + OPEN.length, end).trim();
    const parsed = parseBody(body);
    if (typeof parsed === "string") problems.push(parsed);
    else directives.push(parsed);
    cursor = end + CLOSE.length;
  }
  text += message.slice(cursor);
  // Runs of blanks and tabs become one space. Only runs and tabs are matched (a lone space already is one), so a
  // multi-megabyte message of ordinary prose is not rebuilt match by match and comes back without a copy.
  return { text: text.replace(/[ \t]{2,}|\t/g, " ").trim(), directives, problems };
}

/** Index of the `]]` closing a directive whose body starts at `from`, skipping over JSON strings and braces. */
function findClose(message: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < message.length; i++) {
    const c = message[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === "{") depth++;
    else if (c === "}") depth = Math.max(0, depth - 1);
    else if (depth === 0 && message.startsWith(CLOSE, i)) return i;
  }
  return -1;
}

function parseBody(body: string): Directive | string {
  const match = /^([a-z]+(?:-[a-z]+)*)(?:\s+([\s\S]*))?$/.exec(body);
  if (match === null) return `Malformed directive [[emu:${body}]].`;
  const keyword = match[1] ?? "";
  const rest = (match[2] ?? "").trim();
  switch (keyword) {
    case "tool":
    case "native":
      return parseCall(keyword, rest);
    case "think":
    case "tokens":
    case "cached":
    case "stall":
    case "drop":
    case "abort-exec":
    case "slow-cancel":
    case "tool-chunks":
    case "tool-gap":
    case "tool-cut":
    case "tool-count":
    case "tool-listed-after":
      return parseCount(keyword, rest);
    case "tool-args-id":
      if (rest === "") return { kind: "tool-args-id" };
      return /^\d{1,7}$/.test(rest) && Number(rest) > 0
        ? { kind: "tool-args-id", call: Number(rest) }
        : `[[emu:tool-args-id]] takes no argument or a call number of at least 1, got "${rest}".`;
    case "rate": {
      const rate = Number(rest);
      return rest !== "" && Number.isFinite(rate) && rate > 0
        ? { kind: "rate", tokensPerSecond: rate }
        : `[[emu:rate]] needs a positive number of tokens per second, got "${rest}".`;
    }
    case "recall":
      return rest === "" ? { kind: "recall" } : "[[emu:recall]] takes no arguments.";
    case "overflow":
      if (rest === "") return { kind: "overflow" };
      return rest === "once"
        ? { kind: "overflow", once: true }
        : `[[emu:overflow]] takes no argument or "once", got "${rest}".`;
    case "truncate":
      return rest === "" ? { kind: "truncate" } : "[[emu:truncate]] takes no arguments.";
    case "then":
      return rest === "" ? { kind: "then" } : "[[emu:then]] takes no arguments.";
    case "todos":
      return parseTodos(rest);
    case "task":
      return parseTask(rest);
    case "echo-model":
      return rest === "" ? { kind: "echo-model" } : "[[emu:echo-model]] takes no arguments.";
    case "describe-image":
      return rest === "" ? { kind: "describe-image" } : "[[emu:describe-image]] takes no arguments.";
    case "error":
      return parseError(rest);
    case "web-search":
      return rest === "" ? "[[emu:web-search]] needs a query." : { kind: "web-search", query: rest };
    case "web-fetch":
      return /^https?:\/\/\S+$/.test(rest)
        ? { kind: "web-fetch", url: rest }
        : `[[emu:web-fetch]] needs one http(s) URL, got "${rest}".`;
    case "switch-mode": {
      const mode = /^([a-z][a-z_]*)(?:\s+([\s\S]*))?$/.exec(rest);
      return mode === null
        ? `[[emu:switch-mode]] needs a mode id (lower case, such as agent, ask or plan), got "${rest}".`
        : { kind: "switch-mode", mode: mode[1] ?? "", explanation: (mode[2] ?? "").trim() };
    }
    default:
      return `Unknown directive [[emu:${keyword}]] (known: ${[...new Set(DIRECTIVES.map((d) => d.keyword))].join(", ")}).`;
  }
}

/** `CODE`, or an ErrorDetails.Error enum name (with or without `ERROR_`) optionally followed by `retryable`. */
function parseError(rest: string): Directive | string {
  if ((ERROR_CODES as readonly string[]).includes(rest)) {
    return { kind: "error", code: rest as (typeof ERROR_CODES)[number] };
  }
  const match = /^(?:ERROR_)?([A-Z][A-Z0-9_]*)(?:\s+(retryable))?$/.exec(rest);
  const name = match?.[1];
  if (match !== null && name !== undefined && ERROR_ENUM_NAMES.has(name)) {
    return { kind: "error", code: { name, retryable: match[2] !== undefined } };
  }
  return (
    `[[emu:error]] needs one of ${ERROR_CODES.join(", ")}, or an ErrorDetails.Error name such as ` +
    `MODEL_BLOCKED (optionally followed by "retryable"), got "${rest}".`
  );
}

function parseCount(
  keyword:
    | "think"
    | "tokens"
    | "cached"
    | "stall"
    | "drop"
    | "abort-exec"
    | "slow-cancel"
    | "tool-chunks"
    | "tool-gap"
    | "tool-cut"
    | "tool-count"
    | "tool-listed-after",
  rest: string,
): Directive | string {
  if (!/^\d{1,7}$/.test(rest)) return `[[emu:${keyword}]] needs a whole number, got "${rest}".`;
  const n = Number(rest);
  if (keyword === "think") return { kind: "think", tokens: n };
  if (keyword === "tokens") return { kind: "tokens", tokens: n };
  if (keyword === "cached") return { kind: "cached", tokens: n };
  if (keyword === "stall") return { kind: "stall", afterTokens: n };
  if (keyword === "abort-exec") return { kind: "abort-exec", afterMs: n };
  if (keyword === "slow-cancel") return { kind: "slow-cancel", afterMs: n };
  if (keyword === "tool-gap") return { kind: "tool-gap", gapMs: n };
  if (keyword === "tool-cut")
    return n > 0 ? { kind: "tool-cut", call: n } : "[[emu:tool-cut]] needs a call number of at least 1.";
  if (keyword === "tool-count")
    return n > 0 ? { kind: "tool-count", count: n } : "[[emu:tool-count]] needs a count of at least 1.";
  if (keyword === "tool-listed-after")
    return n > 0
      ? { kind: "tool-listed-after", call: n }
      : "[[emu:tool-listed-after]] needs a call number of at least 1.";
  if (keyword === "tool-chunks")
    return n > 0 ? { kind: "tool-chunks", size: n } : "[[emu:tool-chunks]] needs a size of at least 1.";
  return { kind: "drop", afterTokens: n };
}

function parseCall(keyword: "tool" | "native", rest: string): Directive | string {
  const match = /^(\S+?)(?:\s+([\s\S]*))?$/.exec(rest);
  const name = match?.[1];
  if (match === null || name === undefined || name.startsWith("{")) return `[[emu:${keyword}]] needs a name.`;
  const argsText = (match[2] ?? "").trim();
  let args: unknown = {};
  if (argsText !== "") {
    try {
      args = JSON.parse(argsText);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return (
        `[[emu:${keyword} ${name}]] arguments are not valid JSON: ${reason} (got ${argsText}). ` +
        "Note: some clients quote or escape arguments that contain spaces; write the JSON without spaces."
      );
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return `[[emu:${keyword} ${name}]] arguments must be a JSON object.`;
  }
  if (keyword === "tool") return { kind: "tool", name, args: args as JsonObject };
  if (!(NATIVE_KINDS as readonly string[]).includes(name)) {
    return `[[emu:native]] kind must be one of ${NATIVE_KINDS.join(", ")}, got "${name}".`;
  }
  return { kind: "native", native: name as NativeKind, args: args as JsonObject };
}

/** `{"<content>":"<status>",…}`: Cursor's todo list, in order. */
function parseTodos(rest: string): Directive | string {
  let value: unknown;
  try {
    value = JSON.parse(rest);
  } catch {
    return `[[emu:todos]] needs a JSON object of todo → status, got "${rest}".`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "[[emu:todos]] needs a JSON object of todo → status.";
  }
  const todos: ScriptedTodo[] = [];
  for (const [content, status] of Object.entries(value)) {
    if (!(TODO_STATUSES as readonly unknown[]).includes(status)) {
      return `[[emu:todos]] status must be one of ${TODO_STATUSES.join(", ")}, got "${String(status)}".`;
    }
    todos.push({ content, status: status as ScriptedTodo["status"] });
  }
  return { kind: "todos", todos };
}

/** `{"description":"…","steps":[{"read":"PATH"},{"grep":"PATTERN"},{"shell":"COMMAND"}]}`. */
function parseTask(rest: string): Directive | string {
  const usage =
    '[[emu:task]] needs {"description":"…","steps":[{"read":"PATH"}|{"grep":"PATTERN"}|{"shell":"COMMAND"},…]}';
  let value: unknown;
  try {
    value = JSON.parse(rest);
  } catch {
    return `${usage}, got "${rest}".`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `${usage}.`;
  const { description, steps } = value as { description?: unknown; steps?: unknown };
  if (typeof description !== "string" || !Array.isArray(steps)) return `${usage}.`;
  const parsed: ScriptedTaskStep[] = [];
  for (const step of steps) {
    const entries = typeof step === "object" && step !== null ? Object.entries(step) : [];
    const [tool, arg] = entries[0] ?? [];
    if (entries.length !== 1 || typeof arg !== "string") return `${usage}: each step is one {"TOOL":"ARGUMENT"}.`;
    if (tool === "read") parsed.push({ tool, path: arg });
    else if (tool === "grep") parsed.push({ tool, pattern: arg });
    else if (tool === "shell") parsed.push({ tool, command: arg });
    else return `${usage}: a step's tool is read, grep or shell, got "${tool}".`;
  }
  return { kind: "task", task: { description, steps: parsed } };
}
