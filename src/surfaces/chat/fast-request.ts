/**
 * A hand-written check of the common shape of a chat completion request, run before the zod schema (request.ts) on
 * the way to the Run: at one stream at a time zod took 70–130 µs of the request's path, this takes a few. It accepts
 * only bodies the schema certainly accepts and returns exactly what the schema would (new objects, the schema's keys
 * first in its order, then the others in the body's order); anything else, valid or not, returns undefined and goes
 * through the schema, so every rejection and its message stay zod's. `fast-request.test.ts` holds both paths to the
 * same result over valid and invalid bodies.
 */

import { STOP_SEQUENCE_LIMITS } from "../kit/stop-sequences.js";
import { type ChatCompletionRequest, chatCompletionRequestSchema, REASONING_EFFORTS } from "./request.js";

type Json = Record<string, unknown>;
/** A value the fast path cannot vouch for: the schema decides. */
const NO = Symbol("no");
type Checked = unknown;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Object.hasOwn(value, "__proto__");
}

/**
 * A loose object's output: `keys` (the schema's, in its order) checked by `check` and kept when present, then every
 * other key of `input` in its order. NO when a check says so.
 */
function loose(
  input: Json,
  keys: readonly string[],
  check: (key: string, value: unknown) => Checked,
): Json | typeof NO {
  const out: Json = {};
  for (const key of keys) {
    if (!Object.hasOwn(input, key)) {
      if (check(key, undefined) === NO) return NO;
      continue;
    }
    const value = check(key, input[key]);
    if (value === NO) return NO;
    out[key] = value;
  }
  for (const key of Object.keys(input)) {
    if (!keys.includes(key)) out[key] = input[key];
  }
  return out;
}

const isString = (value: unknown): value is string => typeof value === "string";
/** `.optional()` string: absent or a string. */
const optionalString = (value: unknown): Checked => (value === undefined || isString(value) ? value : NO);
/** `.nullish()` string. */
const nullishString = (value: unknown): Checked =>
  value === undefined || value === null || isString(value) ? value : NO;
const nullishBoolean = (value: unknown): Checked =>
  value === undefined || value === null || typeof value === "boolean" ? value : NO;
/** A positive integer well inside the safe range, or null/absent. */
const nullishPositiveInt = (value: unknown): Checked =>
  value === undefined || value === null || (Number.isSafeInteger(value) && (value as number) > 0) ? value : NO;

/** A number from `min` to `max`, or null/absent. */
const nullishNumberIn = (value: unknown, min: number, max: number): Checked =>
  value === undefined || value === null || (typeof value === "number" && value >= min && value <= max) ? value : NO;
/** A safe integer from `min` to `max`, or null/absent. */
const nullishIntegerIn = (value: unknown, min: number, max: number): Checked =>
  value === undefined ||
  value === null ||
  (Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max)
    ? value
    : NO;
/** Any integer (unsafe ones too, as the schema's `seed`), or null/absent. */
const nullishInteger = (value: unknown): Checked =>
  value === undefined || value === null || Number.isInteger(value) ? value : NO;

const TEXT_PART_KEYS = ["type", "text"] as const;
const REFUSAL_PART_KEYS = ["type", "refusal"] as const;
const IMAGE_PART_KEYS = ["type", "image_url"] as const;
const IMAGE_URL_KEYS = ["url", "detail"] as const;

/** One content part of the allowed types (text; refusal for the assistant; image_url for the user). */
function part(value: unknown, refusal: boolean, image: boolean): Checked {
  if (!isObject(value)) return NO;
  // The schema copies the part once for its `type` check, then the matching branch copies that copy: the order is
  // the branch's keys, then the rest in the body's order.
  switch (value.type) {
    case "text":
      return loose(value, TEXT_PART_KEYS, (key, v) => (key === "type" ? v : isString(v) ? v : NO));
    case "refusal":
      return refusal ? loose(value, REFUSAL_PART_KEYS, (key, v) => (key === "type" ? v : isString(v) ? v : NO)) : NO;
    case "image_url":
      if (!image) return NO;
      return loose(value, IMAGE_PART_KEYS, (key, v) => {
        if (key === "type") return v;
        if (!isObject(v)) return NO;
        return loose(v, IMAGE_URL_KEYS, (k, u) => (k === "url" ? (isString(u) ? u : NO) : optionalString(u)));
      });
    default:
      return NO;
  }
}

function content(value: unknown, refusal: boolean, image: boolean): Checked {
  return isString(value) ? value : array(value, (item) => part(item, refusal, image));
}

const TOOL_CALL_KEYS = ["id", "type", "function"] as const;
const FUNCTION_CALL_KEYS = ["name", "arguments"] as const;

function toolCall(value: unknown): Checked {
  if (!isObject(value)) return NO;
  return loose(value, TOOL_CALL_KEYS, (key, v) => {
    if (key === "id") return isString(v) ? v : NO;
    if (key === "type") return v === undefined || v === "function" ? v : NO;
    if (!isObject(v)) return NO;
    return loose(v, FUNCTION_CALL_KEYS, (_k, s) => (isString(s) ? s : NO));
  });
}

function array(value: unknown, item: (value: unknown) => Checked): unknown[] | typeof NO {
  if (!Array.isArray(value)) return NO;
  const out: unknown[] = [];
  for (const element of value) {
    const checked = item(element);
    if (checked === NO) return NO;
    out.push(checked);
  }
  return out;
}

const TEXT_MESSAGE_KEYS = ["role", "content", "name"] as const;
const ASSISTANT_KEYS = ["role", "content", "tool_calls", "name"] as const;
const TOOL_MESSAGE_KEYS = ["role", "tool_call_id", "content"] as const;

function message(value: unknown): Checked {
  if (!isObject(value)) return NO;
  switch (value.role) {
    case "system":
    case "developer":
    case "user": {
      const image = value.role === "user";
      return loose(value, TEXT_MESSAGE_KEYS, (key, v) =>
        key === "role" ? v : key === "content" ? content(v, false, image) : optionalString(v),
      );
    }
    case "assistant":
      return loose(value, ASSISTANT_KEYS, (key, v) => {
        if (key === "role") return v;
        if (key === "content") return v === undefined || v === null ? v : content(v, true, false);
        if (key === "tool_calls") return v === undefined || v === null ? v : array(v, toolCall);
        return optionalString(v);
      });
    case "tool":
      return loose(value, TOOL_MESSAGE_KEYS, (key, v) =>
        key === "role" ? v : key === "tool_call_id" ? (isString(v) ? v : NO) : content(v, false, false),
      );
    default:
      return NO;
  }
}

const isStopSequence = (value: unknown): value is string =>
  isString(value) && value.length <= STOP_SEQUENCE_LIMITS.chars;

const TOOL_KEYS = ["type", "function"] as const;
const FUNCTION_KEYS = ["name", "description", "parameters", "strict"] as const;

/** A JSON object kept as the schema's record does: a new object with the same keys in the same order. */
function record(value: unknown): Checked {
  if (!isObject(value)) return NO;
  const out: Json = {};
  for (const key of Object.keys(value)) out[key] = value[key];
  return out;
}

function tool(value: unknown): Checked {
  if (!isObject(value) || value.type !== "function") return NO;
  return loose(value, TOOL_KEYS, (key, v) => {
    if (key === "type") return v;
    if (!isObject(v)) return NO;
    return loose(v, FUNCTION_KEYS, (k, f) => {
      if (k === "name") return isString(f) && f.length > 0 ? f : NO;
      if (k === "description") return nullishString(f);
      if (k === "parameters") return f === undefined || f === null ? f : record(f);
      return nullishBoolean(f);
    });
  });
}

/**
 * The schema's own keys, in its order (zod writes its output in that order): a key the schema gains reaches the
 * `default` of {@link requestField} (absent or null, else the schema decides) instead of passing unchecked.
 */
const REQUEST_KEYS = Object.keys(chatCompletionRequestSchema.shape);
const STREAM_OPTIONS_KEYS = ["include_usage"] as const;
const FAST_EFFORTS: ReadonlySet<unknown> = new Set(REASONING_EFFORTS);
const FAST_CHOICES: ReadonlySet<unknown> = new Set(["auto", "none", "required"]);

function requestField(key: string, value: unknown): Checked {
  switch (key) {
    case "model":
      return isString(value) && value.length > 0 && value.length <= 256 ? value : NO;
    case "messages": {
      const messages = array(value, message);
      return messages !== NO && messages.length > 0 ? messages : NO;
    }
    case "stream":
    case "parallel_tool_calls":
      return nullishBoolean(value);
    case "stream_options":
      if (value === undefined || value === null) return value;
      if (!isObject(value)) return NO;
      return loose(value, STREAM_OPTIONS_KEYS, (_k, v) => nullishBoolean(v));
    case "tools":
      return value === undefined || value === null ? value : array(value, tool);
    case "tool_choice":
      return value === undefined || value === null || FAST_CHOICES.has(value) ? value : NO;
    case "n":
    case "max_tokens":
    case "max_completion_tokens":
      return nullishPositiveInt(value);
    case "reasoning_effort":
      return value === undefined || value === null || FAST_EFFORTS.has(value) ? value : NO;
    case "user":
      return nullishString(value);
    case "stop":
      if (value === undefined || value === null) return value;
      if (isString(value)) return isStopSequence(value) ? value : NO;
      return Array.isArray(value) && value.length <= STOP_SEQUENCE_LIMITS.count && value.every(isStopSequence)
        ? [...value]
        : NO;
    // The parameters checked but ignored (request.ts `ignoredFields`): one typeof each, so a client that sends them
    // stays on this path; a wrong type or range goes to the schema, which words the 400.
    case "temperature":
      return nullishNumberIn(value, 0, 2);
    case "top_p":
      return nullishNumberIn(value, 0, 1);
    case "frequency_penalty":
    case "presence_penalty":
      return nullishNumberIn(value, -2, 2);
    case "seed":
      return nullishInteger(value);
    case "top_logprobs":
      return nullishIntegerIn(value, 0, 20);
    case "logprobs":
    case "store":
      return nullishBoolean(value);
    case "service_tier":
    case "prompt_cache_key":
    case "safety_identifier":
    case "verbosity":
      return nullishString(value);
    case "modalities":
      if (value === undefined || value === null) return value;
      return Array.isArray(value) && value.every(isString) ? [...value] : NO;
    case "logit_bias":
      if (value === undefined || value === null) return value;
      return isObject(value) && Object.values(value).every((bias) => typeof bias === "number") ? record(value) : NO;
    case "audio":
    case "prediction":
      return value === undefined || value === null ? value : record(value);
    case "functions":
      return value === undefined || value === null ? value : array(value, record);
    case "function_call":
      return value === undefined || value === null || isString(value) ? value : record(value);
    default:
      // metadata, response_format, web_search_options: only when absent or null; otherwise the schema decides.
      return value === undefined || value === null ? value : NO;
  }
}

/**
 * What `chatCompletionRequestSchema.parse(body)` returns, when the body has the common shape it certainly accepts;
 * undefined otherwise (then the schema decides, and words any rejection).
 */
export function fastChatRequest(body: unknown): ChatCompletionRequest | undefined {
  if (!isObject(body)) return undefined;
  const out = requestObject(body);
  return out === NO ? undefined : (out as ChatCompletionRequest);
}

/** Where each of the schema's keys comes in its output. */
const REQUEST_KEY_INDEX: ReadonlyMap<string, number> = new Map(REQUEST_KEYS.map((key, index) => [key, index]));
/** The schema's keys that may not be absent (model, messages), asked of the schema itself. */
const SHAPE: Readonly<Record<string, { safeParse(value: unknown): { success: boolean } }>> =
  chatCompletionRequestSchema.shape;
const REQUIRED_KEYS = REQUEST_KEYS.filter((key) => SHAPE[key]?.safeParse(undefined).success === false);
const byRequestKeyOrder = (a: string, b: string) => (REQUEST_KEY_INDEX.get(a) ?? 0) - (REQUEST_KEY_INDEX.get(b) ?? 0);

/**
 * The top level as {@link loose} makes it, walking the body's few keys instead of the schema's many (most of which a
 * request leaves out: the parameters checked but ignored made them three dozen): the schema's keys present, in its
 * order, then the others in the body's order.
 */
function requestObject(input: Json): Json | typeof NO {
  for (const key of REQUIRED_KEYS) if (!Object.hasOwn(input, key)) return NO;
  const keys = Object.keys(input);
  const known: string[] = [];
  for (const key of keys) if (REQUEST_KEY_INDEX.has(key)) known.push(key);
  known.sort(byRequestKeyOrder);
  const out: Json = {};
  for (const key of known) {
    const value = requestField(key, input[key]);
    if (value === NO) return NO;
    out[key] = value;
  }
  for (const key of keys) if (!REQUEST_KEY_INDEX.has(key)) out[key] = input[key];
  return out;
}
