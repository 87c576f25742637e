/**
 * The one JSON body reader of every API door: the body must be a JSON object, nested at most
 * {@link MAX_JSON_DEPTH} levels anywhere (tool schemas, tool arguments, content; the JSON texts a body carries inside
 * strings too), with no number a double cannot hold (`1e400`), and its `model` at most {@link MAX_MODEL_CHARS}
 * characters. Each rejection is a 400 naming the field.
 * Every surface's parser starts with {@link checkJsonBody}: the depth is checked iteratively right after JSON.parse,
 * before anything walks the body recursively (zod, the translators, protobuf), so 10,000 levels are a 400, never a
 * stack overflow and never a Run.
 */
import type { Context } from "hono";
import { ProxyError } from "../../util/errors.js";
import { assertJsonDepth } from "./json-limits.js";

/** Longest `model` accepted (OpenAI's limit; ids Cursor lists are far shorter). */
export const MAX_MODEL_CHARS = 256;

/** A JSON body as a plain object. */
export type JsonBody = Record<string, unknown>;

/** Paths of strings in a body whose values are JSON texts (tool call arguments), for the depth check. */
export type JsonStringFinder = (body: JsonBody) => Iterable<[PropertyKey[], string]>;

/** Surface-specific rules of {@link readJsonBody}. */
export interface BodyRules {
  /** JSON texts carried inside strings, checked for depth like the body itself. @default none */
  jsonStrings?: JsonStringFinder;
}

/** Checks a parsed body against the kit's limits. @throws ProxyError invalid_request (400) naming the field. */
export function checkJsonBody(body: unknown, rules: BodyRules = {}): JsonBody {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProxyError("invalid_request", "The request body must be a JSON object.", { param: "body" });
  }
  const object = body as JsonBody;
  const finder = rules.jsonStrings;
  assertJsonDepth(object, finder === undefined ? () => [] : (value) => finder(value as JsonBody));
  const tooLong = modelTooLong(object.model);
  if (tooLong !== undefined) throw tooLong;
  return object;
}

/** The error for a `model` over {@link MAX_MODEL_CHARS} characters (every door's, ACP's model option too), or undefined. */
export function modelTooLong(model: unknown): ProxyError | undefined {
  if (typeof model !== "string" || model.length <= MAX_MODEL_CHARS) return undefined;
  return new ProxyError(
    "invalid_request",
    `Invalid value for 'model': expected at most ${MAX_MODEL_CHARS} characters, got ${model.length}.`,
    { param: "model", detail: "invalid_field" },
  );
}

/**
 * Reads and parses the request body (each surface's parser then starts with {@link checkJsonBody}). The text is what
 * the body limit read (server/body-limit.ts): decoded as UTF-8 in one pass, bytes that are not UTF-8 already a 400.
 */
export async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  // hono caches the body text for later readers; nothing reads it again, and a multi-megabyte body would otherwise
  // stay alive next to the parsed object for the whole turn.
  c.req.bodyCache = {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProxyError("invalid_request", "The request body is not valid JSON.", { param: "body" });
  }
}
