/**
 * Outbound error edge: ProxyError → OpenAI error body + HTTP status + headers. The `type` follows
 * the HTTP status the way openai-node picks its error class (400 BadRequest … 429 RateLimit, ≥500 InternalServer);
 * `code` uses the strings OpenAI and OpenCode recognise (`context_length_exceeded`, `insufficient_quota`,
 * `rate_limit_exceeded`, `model_not_found`) and one string per ProxyError code otherwise (docs/api.md lists them).
 * Messages are redacted and never carry a stack trace; an internal error's message is never sent at all.
 */

import type { ProxyError, ProxyErrorDetail } from "../../util/errors.js";
import { decideError, type ErrorContext, errorJsonResponse, LOCAL_API_KEY_DETAIL } from "./error-policy.js";

export { LOCAL_API_KEY_DETAIL };

/** The JSON body OpenAI returns for errors (also the payload of the SSE error frame). */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** Everything the HTTP edge needs to answer with an error. */
export interface OpenAIErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: OpenAIErrorBody;
}

function typeForStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 422) return "unprocessable_entity_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** Reasons that are sent as the OpenAI `code` themselves (the client can act on them). */
const DETAIL_AS_CODE = new Set<ProxyErrorDetail>([
  "model_not_found",
  "turn_expired",
  "host_not_allowed",
  "origin_not_allowed",
  "blob_not_found",
  "outdated_client",
  "nesting_too_deep",
  "image_too_large",
  "turn_in_progress",
  "previous_response_not_found",
  "store_unavailable",
  "server_shutting_down",
  "server_updated",
  "upstream_truncated",
  "model_not_available",
]);

/** Machine-readable OpenAI `code` for every ProxyError code (exhaustive: a new code must choose one). */
function codeFor(error: ProxyError): string | null {
  if (error.detail !== undefined && DETAIL_AS_CODE.has(error.detail)) return error.detail;
  switch (error.code) {
    case "invalid_request":
      return null;
    case "request_too_large":
      return "request_too_large";
    case "unsupported_media_type":
      return "unsupported_media_type";
    case "context_length_exceeded":
      return "context_length_exceeded";
    case "rate_limited":
      return "rate_limit_exceeded";
    case "quota_exceeded":
      return "insufficient_quota";
    case "key_budget_exceeded":
      return "key_budget_exceeded";
    case "unauthenticated":
      return error.detail === LOCAL_API_KEY_DETAIL ? "invalid_api_key" : "cursor_auth_failed";
    case "permission_denied":
      return "permission_denied";
    case "not_found":
      return "not_found";
    case "backend_unavailable":
      return "upstream_unavailable";
    case "backend_protocol":
      return "upstream_error";
    case "timeout":
      return "upstream_timeout";
    case "canceled":
      return "request_canceled";
    case "internal":
      return "internal_error";
  }
}

function typeFor(error: ProxyError): string {
  if (error.code === "quota_exceeded") return "insufficient_quota";
  if (error.code === "context_length_exceeded") return "invalid_request_error";
  return typeForStatus(error.status);
}

/**
 * Converts anything thrown (status, retry headers and message decided by kit/error-policy.ts) into the OpenAI error response. Anything but a ProxyError becomes a generic 500 whose
 * message does not echo the original (it may hold internals); aborts become 499 `request_canceled`.
 * `x-should-retry` tells SDKs (openai-node honours it) whether retrying can help, so a usage limit reaches the user
 * at once instead of after the SDK's retries.
 */
export function toOpenAIError(error: unknown, context: ErrorContext = {}): OpenAIErrorResponse {
  const decision = decideError(error, { ...context, dialect: "openai" });
  const proxyError = decision.error;
  return {
    status: decision.status,
    headers: decision.headers,
    body: {
      error: {
        message: decision.message,
        type: typeFor(proxyError),
        param: proxyError.param ?? null,
        code: codeFor(proxyError),
      },
    },
  };
}

/** The OpenAI-shaped JSON error response for anything thrown (every OpenAI door's error handler). */
export function openAIErrorResponse(error: unknown, context: ErrorContext = {}): Response {
  const decision = decideError(error, { ...context, dialect: "openai" });
  return errorJsonResponse(decision, toOpenAIError(decision.error, context).body);
}
