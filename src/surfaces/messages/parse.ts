/**
 * Validates `POST /v1/messages` and `/v1/messages/count_tokens` bodies. Every rejection is a
 * ProxyError("invalid_request") whose `param` and message name the exact field (`messages.1.content.0.type`, the
 * dotted notation Anthropic uses in its own validation errors).
 */
import type { z } from "zod";
import { checkJsonBody } from "../kit/json-body.js";
import { validate } from "../kit/zod-issues.js";
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

/** Parses a Messages request body. @throws ProxyError invalid_request (400) naming the field. */
export function parseMessagesRequest(body: unknown): Parsed<MessagesRequest> {
  return parseWith(messagesRequestSchema, body);
}

/** Parses a count_tokens request body. @throws ProxyError invalid_request (400) naming the field. */
export function parseCountTokensRequest(body: unknown): Parsed<CountTokensRequest> {
  return parseWith(countTokensRequestSchema, body);
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
