/**
 * zod schemas for the body of `POST /v1/messages` (and `/v1/messages/count_tokens`), following Anthropic's Messages
 * reference and what Claude Code 2.1.330 sends (observed by driving the real client offline): `role:"system"`
 * messages inside `messages[]`, `cache_control` on any block, `defer_loading` on tools, `thinking:{type:"adaptive"}`,
 * `output_config.effort` and `.format`, `context_management`. Objects are loose: unknown keys pass and are reported
 * as ignored. Block types the bridge cannot carry fail with a `custom` issue that names the exact field.
 */
import * as z from "zod";
import { STOP_SEQUENCE_LIMITS } from "../kit/stop-sequences.js";

const cacheControl = z.looseObject({ type: z.string() }).nullish();

/** A content block whose type is outside `allowed` fails at `…type` with a message saying what is supported. */
function block<T extends z.ZodType<unknown, { type: string }>>(allowed: readonly string[], schema: T, where: string) {
  return z
    .looseObject({ type: z.string() })
    .superRefine((value, ctx) => {
      if (allowed.includes(value.type)) return;
      const hint =
        value.type === "document"
          ? "document blocks are not supported by cursor-bridge."
          : `only ${allowed.join(", ")} blocks are supported ${where}.`;
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `Unsupported content block type '${value.type}': ${hint}`,
      });
    })
    .pipe(schema);
}

export const textBlock = z.looseObject({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });

const base64Source = z.looseObject({
  type: z.literal("base64"),
  media_type: z.string(),
  data: z.string(),
});

/** Image blocks: only base64 sources; URL and file sources fail with a message saying so. */
export const imageBlock = z.looseObject({
  type: z.literal("image"),
  source: z
    .looseObject({ type: z.string() })
    .superRefine((source, ctx) => {
      if (source.type === "base64") return;
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `Image source type '${source.type}' is not supported: only base64 image sources are accepted.`,
      });
    })
    .pipe(base64Source),
  cache_control: cacheControl,
});

const toolResultContent = z.union([
  z.string(),
  z.array(block(["text", "image"], z.discriminatedUnion("type", [textBlock, imageBlock]), "inside a tool_result")),
]);

export const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: toolResultContent.optional(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});

export const toolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

export const thinkingBlock = z.looseObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
});

export const redactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

/**
 * Server tool blocks of an earlier answer (web search / fetch, issue #27) that clients re-send: carried opaquely and
 * left out of the history, like thinking signatures.
 */
export const serverToolBlock = z.looseObject({
  type: z.enum(["server_tool_use", "web_search_tool_result", "web_fetch_tool_result"]),
});

const USER_BLOCKS = ["text", "image", "tool_result"] as const;
const ASSISTANT_BLOCKS = [
  "text",
  "tool_use",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
] as const;

const userContent = z.union([
  z.string(),
  z.array(
    block(USER_BLOCKS, z.discriminatedUnion("type", [textBlock, imageBlock, toolResultBlock]), "in user messages"),
  ),
]);
const assistantContent = z.union([
  z.string(),
  z.array(
    block(
      ASSISTANT_BLOCKS,
      z.discriminatedUnion("type", [textBlock, toolUseBlock, thinkingBlock, redactedThinkingBlock, serverToolBlock]),
      "in assistant messages",
    ),
  ),
]);
const systemContent = z.union([z.string(), z.array(block(["text"], textBlock, "in system content"))]);

/** Roles accepted in `messages[]` (Claude Code places `system` messages inside the list). */
export const MESSAGE_ROLES = ["user", "assistant", "system"] as const;

const message = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("user"), content: userContent }),
  z.looseObject({ role: z.literal("assistant"), content: assistantContent }),
  z.looseObject({ role: z.literal("system"), content: systemContent }),
]);

const tool = z
  .looseObject({
    name: z.string().min(1),
    type: z.string().nullish(),
    description: z.string().nullish(),
    input_schema: z.record(z.string(), z.unknown()).optional(),
    cache_control: cacheControl,
    defer_loading: z.boolean().nullish(),
    // Limits of the web search / fetch server tools (issue #27).
    max_uses: z.number().int().min(1).nullish(),
    allowed_domains: z.array(z.string()).nullish(),
    blocked_domains: z.array(z.string()).nullish(),
  })
  .superRefine((value, ctx) => {
    if ((value.allowed_domains?.length ?? 0) > 0 && (value.blocked_domains?.length ?? 0) > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["blocked_domains"],
        message: "Cannot specify both allowed_domains and blocked_domains.",
      });
    }
  });

const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal("tool"), name: z.string(), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal("none") }),
]);

/** Anthropic's floor for a thinking budget ("must be ≥ 1024 and less than max_tokens"; the ceiling is in parse.ts). */
export const MIN_THINKING_BUDGET = 1024;

const thinking = z.discriminatedUnion("type", [
  // Anthropic requires the budget; it stays optional here, as before, for clients that leave it out.
  z.looseObject({ type: z.literal("enabled"), budget_tokens: z.number().int().min(MIN_THINKING_BUDGET).optional() }),
  z.looseObject({ type: z.literal("adaptive") }),
  z.looseObject({ type: z.literal("disabled") }),
]);

/** Effort levels Anthropic documents for `output_config.effort`. */
export const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

/** Structured output (`output_config.format`, and the beta's earlier top-level `output_format`): a JSON Schema. */
const outputFormat = z.looseObject({ type: z.literal("json_schema"), schema: z.record(z.string(), z.unknown()) });

const requestFields = {
  model: z.string().min(1),
  messages: z.array(message).min(1),
  system: systemContent.optional(),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  thinking: thinking.nullish(),
  output_config: z.looseObject({ effort: z.enum(EFFORTS).nullish(), format: outputFormat.nullish() }).nullish(),
  output_format: outputFormat.nullish(),
  /** The kit cuts the answer at the first (kit/stop-sequences.ts). */
  stop_sequences: z.array(z.string().max(STOP_SEQUENCE_LIMITS.chars)).max(STOP_SEQUENCE_LIMITS.count).nullish(),
};

/**
 * Parameters of Anthropic's Messages reference that Cursor has no equivalent of: accepted without effect (and listed
 * as ignored), but held to Anthropic's types and ranges, so a wrong one is the 400 Anthropic would answer.
 * `null` passes wherever absence does.
 */
const ignoredFields = {
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
  service_tier: z.string().nullish(),
  container: z.union([z.string(), z.looseObject({})]).nullish(),
  context_management: z.looseObject({}).nullish(),
  mcp_servers: z.array(z.looseObject({})).nullish(),
  inference_geo: z.string().nullish(),
};

/** `POST /v1/messages`. `max_tokens` is required, as Anthropic requires it. */
export const messagesRequestSchema = z.looseObject({
  ...requestFields,
  max_tokens: z.number().int().min(1),
  stream: z.boolean().nullish(),
  ...ignoredFields,
});

/** Keys of {@link messagesRequestSchema} checked but without effect (reported as ignored). */
export const CHECKED_IGNORED_KEYS: readonly string[] = Object.keys(ignoredFields);

/** `POST /v1/messages/count_tokens`: the same body without `max_tokens` and `stream`. */
export const countTokensRequestSchema = z.looseObject(requestFields);

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;
export type AnthropicMessageParam = MessagesRequest["messages"][number];
export type AnthropicToolParam = NonNullable<MessagesRequest["tools"]>[number];

/**
 * Top-level keys the bridge acts on (`max_tokens`: the kit caps the answer there, kit/stop-sequences.ts); every other
 * key present is reported in `x-cursor-bridge-ignored-params`.
 */
export const HANDLED_REQUEST_KEYS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "output_config",
  "output_format",
  "stop_sequences",
  "max_tokens",
  "stream",
]);
