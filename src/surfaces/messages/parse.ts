/**
 * Validates `POST /v1/messages` and `/v1/messages/count_tokens` bodies. Every rejection is a
 * ProxyError("invalid_request") whose `param` and message name the exact field (`messages.1.content.0.type`, the
 * dotted notation Anthropic uses in its own validation errors).
 */
import type { z } from "zod";
import { clampForMessage } from "../../util/logger.js";
import { checkJsonBody } from "../kit/json-body.js";
import { invalidParam, validate } from "../kit/zod-issues.js";
import {
  type CountTokensRequest,
  countTokensRequestSchema,
  HANDLED_REQUEST_KEYS,
  type MessagesRequest,
  messagesRequestSchema,
} from "./request.js";

/** A validated body plus the top-level keys that were accepted without effect, in body order. */
export interface Parsed<T> {
  request: T;
  ignoredParams: string[];
}

/** What a Messages request carries besides its body. */
export interface MessagesRequestContext {
  /** The request's `anthropic-beta` header (a comma-separated list), if any. */
  beta?: string | undefined;
}

/**
 * Parses a Messages request body. @throws ProxyError invalid_request (400) naming the field.
 * `context.beta` matters to one rule: with interleaved thinking a thinking budget may exceed `max_tokens`.
 */
export function parseMessagesRequest(body: unknown, context: MessagesRequestContext = {}): Parsed<MessagesRequest> {
  const parsed = parseWith(messagesRequestSchema, body);
  checkTools(parsed.request);
  checkThinkingBudget(parsed.request, context.beta);
  return parsed;
}

/**
 * Anthropic's rule for a manual thinking budget: less than `max_tokens` (the budget is part of the output), except
 * with the interleaved-thinking beta, where the budget spans every thinking block of the turn and may exceed it.
 */
function checkThinkingBudget(request: MessagesRequest, beta: string | undefined): void {
  const thinking = request.thinking;
  if (thinking?.type !== "enabled" || thinking.budget_tokens === undefined) return;
  if (thinking.budget_tokens < request.max_tokens) return;
  if (beta?.split(",").some((name) => name.trim().startsWith("interleaved-thinking-"))) return;
  throw invalidParam(
    "thinking.budget_tokens",
    `thinking.budget_tokens: Input should be less than max_tokens (${request.max_tokens}), got ${thinking.budget_tokens}`,
  );
}

/** Parses a count_tokens request body. @throws ProxyError invalid_request (400) naming the field. */
export function parseCountTokensRequest(body: unknown): Parsed<CountTokensRequest> {
  const parsed = parseWith(countTokensRequestSchema, body);
  checkTools(parsed.request);
  return parsed;
}

/**
 * What the schema cannot say field by field, as Anthropic refuses it: two tools of one name (the second's schema would
 * otherwise be dropped unseen), and a `tool_choice` that needs tools, or names one the request does not declare.
 */
function checkTools(request: Pick<MessagesRequest, "tools" | "tool_choice">): void {
  const names = new Set<string>();
  (request.tools ?? []).forEach((tool, index) => {
    if (names.has(tool.name)) {
      throw invalidParam(
        `tools.${index}.name`,
        `tools: Tool names must be unique (\`${clampForMessage(tool.name, 100)}\`).`,
      );
    }
    names.add(tool.name);
  });
  const choice = request.tool_choice;
  if (choice == null || choice.type === "auto" || choice.type === "none") return;
  if (names.size === 0) {
    throw invalidParam("tool_choice", `tool_choice: \`${choice.type}\` requires \`tools\` to be given.`);
  }
  if (choice.type === "tool" && !names.has(choice.name)) {
    throw invalidParam(
      "tool_choice.name",
      `tool_choice: no tool named \`${clampForMessage(choice.name, 100)}\` in \`tools\`.`,
    );
  }
}

function parseWith<T>(schema: z.ZodType<T>, raw: unknown): Parsed<T> {
  // The kit's limits (object, nesting anywhere, model length) before zod or a translator walks the body.
  const body = checkJsonBody(raw);
  const request = validate(schema, body, [], body, { dialect: "anthropic" });
  const ignoredParams = Object.entries(body)
    .filter(([key, value]) => !HANDLED_REQUEST_KEYS.has(key) && value !== undefined && value !== null)
    .map(([key]) => key);
  return { request, ignoredParams };
}
