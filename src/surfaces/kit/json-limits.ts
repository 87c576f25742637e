/**
 * Bounds on what a request body may contain beyond its size. Deeply nested JSON is cheap to send and expensive to
 * process: every recursive walk after parsing (validation, history normalisation, protobuf encoding, logging) can
 * overflow the stack. The body is checked once, iteratively, right after JSON.parse; so are the JSON texts a body
 * carries inside strings (tool call `arguments`), which are parsed later. The same walk refuses, by name, a number
 * too large for a double (`1e400`): JSON.parse makes it Infinity, which JSON.stringify would send on as `null`.
 */
import { ProxyError } from "../../util/errors.js";
import { formatParamPath } from "./param-path.js";

/** Deepest nesting accepted anywhere in a request (objects and arrays; the body itself is level 1). */
export const MAX_JSON_DEPTH = 64;

interface Frame {
  value: unknown;
  depth: number;
  key: PropertyKey | undefined;
  parent: Frame | undefined;
}

function pathOf(frame: Frame): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/** What {@link findJsonProblem} found, and where. */
export interface JsonProblem {
  /** `too_deep`: a container nested deeper than allowed; `out_of_range`: a number JSON.parse made ±Infinity. */
  kind: "too_deep" | "out_of_range";
  path: PropertyKey[];
}

/**
 * The first problem in a parsed value: a container nested deeper than `max` levels, or a number literal too large
 * for a double (`1e400`), which JSON.parse turns into ±Infinity and JSON.stringify would send on as `null`. It runs
 * on every request body, so it walks only the containers and allocates nothing per member (no `Object.entries`
 * pair, no frame for a string or a number).
 */
export function findJsonProblem(value: unknown, max = MAX_JSON_DEPTH): JsonProblem | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > max) return { kind: "too_deep", path: pathOf(frame) };
    const current = frame.value as Record<string, unknown> | unknown[];
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        const item = current[i];
        if (typeof item === "object" && item !== null) {
          stack.push({ value: item, depth: frame.depth + 1, key: i, parent: frame });
        } else if (item === Infinity || item === -Infinity) {
          return { kind: "out_of_range", path: [...pathOf(frame), i] };
        }
      }
    } else {
      // A parsed value's objects are plain: their enumerable keys are their own, in Object.keys' order.
      for (const key in current) {
        const item = current[key];
        if (typeof item === "object" && item !== null) {
          stack.push({ value: item, depth: frame.depth + 1, key, parent: frame });
        } else if (item === Infinity || item === -Infinity) {
          return { kind: "out_of_range", path: [...pathOf(frame), key] };
        }
      }
    }
  }
  return undefined;
}

/** The nesting depth of a JSON text, counted without parsing it (brackets outside strings). */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x7d || char === 0x5d) depth--;
  }
  return deepest;
}

/** The field to name: the first few steps of the path, which say where in the request the nesting is. */
const NAMED_STEPS = 6;

function tooDeep(path: readonly PropertyKey[], inside: string): ProxyError {
  const param = formatParamPath(path.slice(0, NAMED_STEPS));
  const more = path.length > NAMED_STEPS ? "…" : "";
  return new ProxyError(
    "invalid_request",
    `Invalid value for '${param}': JSON is nested more than ${MAX_JSON_DEPTH} levels deep${inside} (at '${param}${more}').`,
    { param, detail: "nesting_too_deep" },
  );
}

function outOfRange(path: readonly PropertyKey[]): ProxyError {
  const param = formatParamPath(path);
  return new ProxyError(
    "invalid_request",
    `Invalid value for '${param}': the number is out of range (a JSON number must be at most about 1.8e308 in ` +
      "magnitude, a 64-bit float).",
    { param, detail: "out_of_range" },
  );
}

/**
 * Rejects a parsed body nested deeper than {@link MAX_JSON_DEPTH} or holding a number out of a double's range, and
 * JSON texts inside it at `jsonStrings` nested too deep (paths whose string values are JSON, e.g. every
 * `messages[i].tool_calls[j].function.arguments`; those are carried as sent, so their numbers are never altered).
 * @throws ProxyError `invalid_request` (`nesting_too_deep`, `out_of_range`) whose `param` names the field.
 */
export function assertJsonDepth(
  body: unknown,
  jsonStrings: (body: unknown) => Iterable<[PropertyKey[], string]>,
): void {
  const problem = findJsonProblem(body);
  if (problem !== undefined) throw problem.kind === "too_deep" ? tooDeep(problem.path, "") : outOfRange(problem.path);
  for (const [path, text] of jsonStrings(body)) {
    if (jsonTextDepth(text) > MAX_JSON_DEPTH) throw tooDeep(path, " inside this JSON string");
  }
}

/** The `function.arguments` strings of the assistant tool calls in a chat completion body. */
export function* chatToolCallArguments(body: unknown): Iterable<[PropertyKey[], string]> {
  const messages = (body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages)) return;
  for (const [i, message] of messages.entries()) {
    const calls = (message as { tool_calls?: unknown } | null)?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const [j, call] of calls.entries()) {
      const args = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
      if (typeof args === "string") yield [["messages", i, "tool_calls", j, "function", "arguments"], args];
    }
  }
}

/** The `arguments` strings of the `function_call` items in a Responses body's `input`. */
export function* responsesFunctionCallArguments(body: unknown): Iterable<[PropertyKey[], string]> {
  const input = (body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return;
  for (const [i, item] of input.entries()) {
    const args = (item as { arguments?: unknown } | null)?.arguments;
    if (typeof args === "string") yield [["input", i, "arguments"], args];
  }
}
