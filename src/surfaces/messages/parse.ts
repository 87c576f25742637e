/**
 * Validates `POST /v1/messages` and `/v1/messages/count_tokens` bodies. Every rejection is a
 * ProxyError("invalid_request") whose `param` and message name the exact field (`messages.1.content.0.type`, the
 * dotted notation Anthropic uses in its own validation errors).
 */
import type { z } from "zod";
import { ProxyError } from "../../util/errors.js";
import { checkJsonBody } from "../kit/json-body.js";
import {
  type CountTokensRequest,
  countTokensRequestSchema,
  HANDLED_REQUEST_KEYS,
  type MessagesRequest,
  messagesRequestSchema,
} from "./request.js";

type Issue = z.core.$ZodIssue;

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
  const result = schema.safeParse(body);
  if (!result.success) {
    const first = result.error.issues[0];
    throw first === undefined ? new ProxyError("invalid_request", "Invalid request body.") : toError(first, [], body);
  }
  const ignoredParams = Object.entries(body)
    .filter(([key, value]) => !HANDLED_REQUEST_KEYS.has(key) && value !== undefined && value !== null)
    .map(([key]) => key);
  return { request: result.data, ignoredParams };
}

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", message, { param });
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

const values = (list: readonly unknown[]) => list.map((v) => JSON.stringify(v)).join(", ");

function toError(issue: Issue, prefix: readonly PropertyKey[], body: unknown): ProxyError {
  const path = [...prefix, ...issue.path];
  const param = path.map(String).join(".");
  const input = valueAt(body, path);
  if (input === undefined && issue.code !== "custom") return invalid(param, `${param}: Field required`);
  switch (issue.code) {
    case "invalid_type":
      return invalid(param, `${param}: Input should be ${issue.expected}, got ${describe(input)}`);
    case "invalid_value":
      return invalid(param, `${param}: Input should be one of ${values(issue.values)}, got ${JSON.stringify(input)}`);
    case "invalid_union":
      return unionError(issue, path, body);
    case "too_small":
      return invalid(
        param,
        issue.origin === "array"
          ? `${param}: List should have at least ${Number(issue.minimum)} item(s)`
          : issue.origin === "string"
            ? `${param}: String should not be empty`
            : `${param}: Input should be greater than or equal to ${Number(issue.minimum)}`,
      );
    case "custom":
      return invalid(param, `${param}: ${issue.message}`);
    default:
      return invalid(param, `${param}: ${issue.message}`);
  }
}

/** Discriminated unions name the allowed tags; plain unions report the branch that got furthest. */
function unionError(issue: z.core.$ZodIssueInvalidUnion, path: PropertyKey[], body: unknown): ProxyError {
  const param = path.map(String).join(".");
  const input = valueAt(body, path);
  if (issue.discriminator !== undefined) {
    const tagPath = path.at(-1) === issue.discriminator ? path : [...path, issue.discriminator];
    const tag = tagPath.map(String).join(".");
    const allowed = "options" in issue && Array.isArray(issue.options) ? values(issue.options) : "a supported value";
    return invalid(tag, `${tag}: Input should be one of ${allowed}, got ${JSON.stringify(valueAt(body, tagPath))}`);
  }
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    for (const candidate of branch) {
      if (best === undefined || candidate.path.length > best.path.length) best = candidate;
    }
  }
  if (best === undefined || best.path.length === 0) {
    return invalid(param, `${param}: Input should be a string or a list of content blocks, got ${describe(input)}`);
  }
  return toError(best, path, body);
}
