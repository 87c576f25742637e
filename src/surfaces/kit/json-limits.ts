/**
 * Bounds on what a request body may contain beyond its size. Deeply nested JSON is cheap to send and expensive to
 * process: every recursive walk after parsing (validation, history normalisation, protobuf encoding, logging) can
 * overflow the stack. The body is checked once, iteratively, right after JSON.parse; so are the JSON texts a body
 * carries inside strings (tool call `arguments`), which are parsed later.
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

/**
 * The path of the first container nested deeper than `max` levels in a parsed value, or undefined. It runs on every
 * request body, so it walks only the containers and allocates nothing per member (no `Object.entries` pair, no frame
 * for a string or a number).
 */
export function findTooDeep(value: unknown, max = MAX_JSON_DEPTH): PropertyKey[] | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > max) return pathOf(frame);
    const current = frame.value as Record<string, unknown> | unknown[];
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        const item = current[i];
        if (typeof item === "object" && item !== null) {
          stack.push({ value: item, depth: frame.depth + 1, key: i, parent: frame });
        }
      }
    } else {
      // A parsed value's objects are plain: their enumerable keys are their own, in Object.keys' order.
      for (const key in current) {
        const item = current[key];
        if (typeof item === "object" && item !== null) {
          stack.push({ value: item, depth: frame.depth + 1, key, parent: frame });
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

/**
 * Rejects a parsed body nested deeper than {@link MAX_JSON_DEPTH}, and JSON texts inside it at `jsonStrings`
 * (paths whose string values are JSON, e.g. every `messages[i].tool_calls[j].function.arguments`).
 * @throws ProxyError `invalid_request` (`nesting_too_deep`) whose `param` names the field.
 */
export function assertJsonDepth(
  body: unknown,
  jsonStrings: (body: unknown) => Iterable<[PropertyKey[], string]>,
): void {
  const deep = findTooDeep(body);
  if (deep !== undefined) throw tooDeep(deep, "");
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
