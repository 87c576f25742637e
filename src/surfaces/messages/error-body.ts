/**
 * Outbound error edge for the Anthropic surface: the kit's error decision (kit/error-policy.ts: status,
 * `x-should-retry`, `Retry-After`, redacted message) rendered as `{type:"error", error:{type, message}}` with the
 * `error.type` Anthropic uses (invalid_request_error 400, authentication_error 401, permission_error 403,
 * not_found_error 404, request_too_large 413, rate_limit_error 429, api_error 500, overloaded_error 529).
 */
import type { ProxyError } from "../../util/errors.js";
import { decideError, type ErrorContext, errorJsonResponse } from "../kit/error-policy.js";

/** Anthropic's error body (also the payload of the streaming `event: error` frame). */
export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
}

/** Everything the HTTP edge needs to answer with an error. */
export interface AnthropicErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: AnthropicErrorBody;
}

function typeFor(error: ProxyError): string {
  const status = error.status;
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  // A server whose code changed on disk needs a restart: an overloaded_error would be retried in vain.
  if (error.detail === "server_updated") return "api_error";
  if (status === 529 || error.code === "backend_unavailable") return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/** Converts anything thrown into the Anthropic error response (aborts keep their 499: the client never reads it). */
export function toAnthropicError(error: unknown, context: ErrorContext = {}): AnthropicErrorResponse {
  const decision = decideError(error, { ...context, dialect: "anthropic" });
  return {
    status: decision.status,
    headers: decision.headers,
    body: { type: "error", error: { type: typeFor(decision.error), message: decision.message } },
  };
}

/** The Anthropic-shaped JSON error response for anything thrown (the Messages door's error handler). */
export function anthropicErrorResponse(error: unknown, context: ErrorContext = {}): Response {
  const decision = decideError(error, { ...context, dialect: "anthropic" });
  return errorJsonResponse(decision, toAnthropicError(decision.error, context).body);
}
