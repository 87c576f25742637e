/**
 * zod schemas for the body of `POST /v1/chat/completions`, following the OpenAI Chat Completions reference.
 * Objects are loose (`z.looseObject`): unknown keys pass through and are reported as ignored by the parser, as
 * openai-compatible clients (Vercel AI SDK, OpenCode) send extras such as `$schema` in tool schemas.
 * Text content everywhere, plus `image_url` parts in user messages; every other content part is rejected with a
 * `custom` issue carrying `params.kind = "unsupported_content_part"` so the parser can name the exact field.
 */
import * as z from "zod";
import { STOP_SEQUENCE_LIMITS } from "../kit/stop-sequences.js";

/** One stop sequence, at most {@link STOP_SEQUENCE_LIMITS}.chars long. */
const stopSequence = z.string().max(STOP_SEQUENCE_LIMITS.chars);

/** Roles a message may have; anything else is a 400 naming `messages[i].role`. */
export const MESSAGE_ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

/**
 * Values accepted for `reasoning_effort`: OpenAI's set (`minimal`, `xhigh` included) and `max`, the top tier of
 * Cursor's models that have one (Claude Opus, GPT-5.6, Kimi); elsewhere it runs the model's highest tier.
 */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/**
 * A content part of a given set of types; other types fail at `…content[j].type` with a clear message. The branches
 * are discriminated on that `type`, so a part is judged by its own branch only: an `image_url` given as a string
 * fails at `…image_url` ("expected object"), not at `…type`.
 */
function contentPart(allowed: readonly string[]) {
  return z
    .looseObject({ type: z.string() })
    .superRefine((part, ctx) => {
      if (allowed.includes(part.type)) return;
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `Unsupported content part type '${part.type}': only ${allowed.join(" and ")} parts are supported.`,
        params: { kind: "unsupported_content_part" },
      });
    })
    .pipe(
      z.discriminatedUnion("type", [
        z.looseObject({ type: z.literal("text"), text: z.string() }),
        z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
        z.looseObject({
          type: z.literal("image_url"),
          image_url: z.looseObject({ url: z.string(), detail: z.string().optional() }),
        }),
      ]),
    );
}

/** Message content: a string or an array of text parts (system, developer, user, tool). */
const textContent = z.union([z.string(), z.array(contentPart(["text"]))]);

/** Assistant content may also hold refusal parts; `null` is allowed when `tool_calls` carry the reply. */
const assistantContent = z.union([z.string(), z.array(contentPart(["text", "refusal"]))]).nullish();

const messageToolCall = z.looseObject({
  id: z.string(),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const systemMessage = z.looseObject({ role: z.literal("system"), content: textContent, name: z.string().optional() });
const developerMessage = z.looseObject({
  role: z.literal("developer"),
  content: textContent,
  name: z.string().optional(),
});
/** User content may also hold images (`image_url` parts with base64 data: URLs). */
const userContent = z.union([z.string(), z.array(contentPart(["text", "image_url"]))]);

const userMessage = z.looseObject({ role: z.literal("user"), content: userContent, name: z.string().optional() });
const assistantMessage = z.looseObject({
  role: z.literal("assistant"),
  content: assistantContent,
  tool_calls: z.array(messageToolCall).nullish(),
  name: z.string().optional(),
});
const toolMessage = z.looseObject({ role: z.literal("tool"), tool_call_id: z.string(), content: textContent });

/** One message of `messages`, discriminated on `role`. */
export const chatMessageSchema = z.discriminatedUnion("role", [
  systemMessage,
  developerMessage,
  userMessage,
  assistantMessage,
  toolMessage,
]);

/**
 * A JSON object of the body (a tool's JSON Schema), typed as JSON without walking it: the body is the output of
 * JSON.parse (kit/json-body.ts `readJson`, its depth already checked), so every value in it is JSON by construction.
 * `z.json()` re-validated each node of each schema: two thirds of the whole parse of a chat request with six tools
 * (88 → 29 µs per parse), and a coding agent sends thirty.
 */
const parsedJsonObject = z.record(z.string(), z.unknown()) as unknown as z.ZodType<
  Record<string, z.core.util.JSONType>
>;

/** A function tool declaration; `parameters` is any JSON Schema object (kept verbatim, `$schema` included). */
export const chatToolSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: parsedJsonObject.nullish(),
    strict: z.boolean().nullish(),
  }),
});

/** `tool_choice`: a mode string, a named function, or a subset of the tools (`allowed_tools`, with a mode). */
export const toolChoiceSchema = z.union([
  z.enum(["auto", "none", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
  z.looseObject({
    type: z.literal("allowed_tools"),
    allowed_tools: z.looseObject({
      mode: z.enum(["auto", "required"]),
      tools: z.array(z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) })),
    }),
  }),
]);

const positiveInt = z.number().int().positive().nullish();

/** `response_format`: plain text, any JSON object, or JSON matching a schema (OpenAI's three forms). */
export const responseFormatSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({
    type: z.literal("json_schema"),
    json_schema: z.looseObject({
      name: z.string().min(1),
      description: z.string().nullish(),
      schema: parsedJsonObject.nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** Request fields the bridge reads. */
const handledFields = {
  model: z.string().min(1).max(256),
  messages: z.array(chatMessageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(chatToolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  n: z.number().int().min(1).nullish(),
  max_tokens: positiveInt,
  max_completion_tokens: positiveInt,
  reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
  user: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  response_format: responseFormatSchema.nullish(),
  stop: z.union([stopSequence, z.array(stopSequence).max(STOP_SEQUENCE_LIMITS.count)]).nullish(),
  /** Search-enabled chat (issue #27): Cursor's web searches are approved; the results come back as annotations. */
  web_search_options: z.looseObject({}).nullish(),
};

/** A number from `min` to `max`, or null/absent. */
const numberIn = (min: number, max: number) => z.number().min(min).max(max).nullish();

/**
 * Any integer, the unsafe ones too: OpenAI's `seed` is an int64, which JSON.parse may round past 2^53 (still an
 * integer); `z.int()` would refuse those.
 */
const anyInteger = z.number().superRefine((value, ctx) => {
  if (!Number.isInteger(value)) ctx.addIssue({ code: "invalid_type", expected: "int", input: value });
});

/**
 * Parameters of OpenAI's Chat Completions reference that Cursor has no equivalent of: accepted without effect (and
 * reported as ignored), but held to OpenAI's types and ranges, so a wrong one is the 400 OpenAI would answer. `null`
 * passes wherever absence does. The fast path (fast-request.ts) checks each with one typeof.
 */
const ignoredFields = {
  temperature: numberIn(0, 2),
  top_p: numberIn(0, 1),
  frequency_penalty: numberIn(-2, 2),
  presence_penalty: numberIn(-2, 2),
  seed: anyInteger.nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  store: z.boolean().nullish(),
  service_tier: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  verbosity: z.string().nullish(),
  modalities: z.array(z.string()).nullish(),
  audio: z.looseObject({}).nullish(),
  prediction: z.looseObject({}).nullish(),
  functions: z.array(z.looseObject({})).nullish(),
  function_call: z.union([z.string(), z.looseObject({})]).nullish(),
};

/**
 * The request: the fields the bridge reads, then the ones it checks and ignores; every other top-level key is accepted
 * and reported as ignored too.
 */
export const chatCompletionRequestSchema = z.looseObject({ ...handledFields, ...ignoredFields });

/** A validated chat completion request (OpenAI field names, loose: extra keys are kept but unused). */
export type ChatCompletionRequest = z.output<typeof chatCompletionRequestSchema>;

/** One validated message. */
export type ChatMessage = z.output<typeof chatMessageSchema>;

/** One validated tool declaration. */
export type ChatTool = z.output<typeof chatToolSchema>;

/** A validated `response_format`. */
export type ResponseFormat = z.output<typeof responseFormatSchema>;

/** A validated `tool_choice`. */
export type ToolChoice = z.output<typeof toolChoiceSchema>;

/** Top-level keys the bridge acts on; all others (the checked ones of `ignoredFields` too) are "ignored params". */
export const HANDLED_REQUEST_KEYS: ReadonlySet<string> = new Set(Object.keys(handledFields));

/** Top-level keys checked for OpenAI's type and range but without effect. */
export const CHECKED_IGNORED_KEYS: readonly string[] = Object.keys(ignoredFields);
