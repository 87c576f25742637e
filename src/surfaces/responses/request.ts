/**
 * zod schemas for the body of `POST /v1/responses`, following the OpenAI Responses reference and what Codex CLI
 * sends (observed by driving the real client offline). Objects are loose: unknown keys pass. Input items and tools are validated one
 * by one by the parser (parse.ts) so an error names the exact field (`input[3].call_id`).
 */
import * as z from "zod";

/** Values accepted for `reasoning.effort`: OpenAI's, and `max` as on chat (chat/request.ts `REASONING_EFFORTS`). */
export const RESPONSES_REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

const jsonObject = z.record(z.string(), z.unknown());

/** Top level. `input` items and `tools` entries are only required to be objects here. */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({}))]),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  tool_choice: z
    .union([z.enum(["auto", "none", "required"]), z.looseObject({ type: z.string(), name: z.string().optional() })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  background: z.boolean().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  reasoning: z
    .looseObject({
      effort: z.enum(RESPONSES_REASONING_EFFORTS).nullish(),
      summary: z.enum(["auto", "concise", "detailed"]).nullish(),
    })
    .nullish(),
  include: z.array(z.string()).nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  text: z
    .looseObject({ format: z.looseObject({ type: z.string() }).nullish(), verbosity: z.string().nullish() })
    .nullish(),
  user: z.string().nullish(),
  // Parameters Cursor has no equivalent of: accepted without effect (reported as ignored), but held to OpenAI's
  // types and ranges, so a wrong one is the 400 OpenAI would answer. `null` passes wherever absence does.
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  max_tool_calls: z.number().int().nullish(),
  truncation: z.string().nullish(),
  service_tier: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_retention: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  prompt: z.looseObject({}).nullish(),
  conversation: z.union([z.string(), z.looseObject({})]).nullish(),
  stream_options: z.looseObject({ include_obfuscation: z.boolean().nullish() }).nullish(),
});

/**
 * `text.format` of type `json_schema` (checked by the parser when that is its type): OpenAI requires a `name` and a
 * `schema` object.
 */
export const jsonSchemaFormatSchema = z.looseObject({
  type: z.literal("json_schema"),
  name: z.string().min(1),
  schema: jsonObject,
  description: z.string().nullish(),
  strict: z.boolean().nullish(),
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** Top-level keys whose effect the bridge implements; every other key present is reported as ignored. */
export const HANDLED_RESPONSES_KEYS: ReadonlySet<string> = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "stream",
  "store",
  "previous_response_id",
  "reasoning",
  "include",
  "metadata",
  "background",
  "max_output_tokens",
]);

const inputText = z.looseObject({ type: z.literal("input_text"), text: z.string() });
const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const refusal = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });
const inputImage = z.looseObject({
  type: z.literal("input_image"),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
});

/** A content part of a message; `input_file` and others fail at `…content[j].type`. */
export const contentPartSchema = z.discriminatedUnion("type", [inputText, outputText, refusal, inputImage]);
export type ContentPart = z.infer<typeof contentPartSchema>;

export const MESSAGE_ROLES = ["user", "assistant", "system", "developer"] as const;

export const messageItemSchema = z.looseObject({
  type: z.literal("message").optional(),
  id: z.string().nullish(),
  role: z.enum(MESSAGE_ROLES),
  content: z.union([z.string(), z.array(contentPartSchema)]),
});

export const functionCallItemSchema = z.looseObject({
  type: z.literal("function_call"),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().nullish(),
  arguments: z.string(),
});

/** Tool output: a string, or content parts (text is kept, images are dropped with a warning). */
const toolOutput = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]);

export const functionCallOutputItemSchema = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1),
  output: toolOutput,
});

export const customToolCallItemSchema = z.looseObject({
  type: z.literal("custom_tool_call"),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
});

export const customToolCallOutputItemSchema = z.looseObject({
  type: z.literal("custom_tool_call_output"),
  call_id: z.string().min(1),
  output: toolOutput,
});

export const reasoningItemSchema = z.looseObject({
  type: z.literal("reasoning"),
  id: z.string().nullish(),
  summary: z.array(z.looseObject({ text: z.string() })).default([]),
  encrypted_content: z.string().nullish(),
});

export type MessageItem = z.infer<typeof messageItemSchema>;
export type FunctionCallItem = z.infer<typeof functionCallItemSchema>;
export type FunctionCallOutputItem = z.infer<typeof functionCallOutputItemSchema>;
export type CustomToolCallItem = z.infer<typeof customToolCallItemSchema>;
export type CustomToolCallOutputItem = z.infer<typeof customToolCallOutputItemSchema>;
export type ReasoningItem = z.infer<typeof reasoningItemSchema>;

/** A validated input item; `ignored` keeps the type of an item the bridge cannot use (`web_search_call`…). */
export type InputItem =
  | ({ kind: "message" } & MessageItem)
  | ({ kind: "function_call" } & FunctionCallItem)
  | ({ kind: "function_call_output" } & FunctionCallOutputItem)
  | ({ kind: "custom_tool_call" } & CustomToolCallItem)
  | ({ kind: "custom_tool_call_output" } & CustomToolCallOutputItem)
  | ({ kind: "reasoning" } & ReasoningItem)
  | { kind: "ignored"; type: string };

export const functionToolSchema = z.looseObject({
  type: z.literal("function"),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: jsonObject.nullish(),
  strict: z.boolean().nullish(),
});

export const customToolSchema = z.looseObject({
  type: z.literal("custom"),
  name: z.string().min(1),
  description: z.string().nullish(),
  format: z.looseObject({ type: z.string(), syntax: z.string().nullish(), definition: z.string().nullish() }).nullish(),
});

export const namespaceToolSchema = z.looseObject({
  type: z.literal("namespace"),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(functionToolSchema),
});

export type FunctionTool = z.infer<typeof functionToolSchema>;
export type CustomTool = z.infer<typeof customToolSchema>;
export type NamespaceTool = z.infer<typeof namespaceToolSchema>;

/** A validated tool; `unsupported` keeps the type of a built-in tool the bridge cannot run. */
export type Tool =
  | ({ kind: "function" } & FunctionTool)
  | ({ kind: "custom" } & CustomTool)
  | ({ kind: "namespace" } & NamespaceTool)
  | { kind: "unsupported"; type: string }
  /** `web_search` / `web_search_preview` (issue #27): offered to Cursor, which runs the search. */
  | { kind: "web-search"; type: string; allowedDomains: string[] | undefined };
