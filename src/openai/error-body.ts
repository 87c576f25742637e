/**
 * Outbound error edge (house-style §4): ProxyError → OpenAI error body + HTTP status + headers. The `type` follows
 * the HTTP status the way openai-node picks its error class (400 BadRequest … 429 RateLimit, ≥500 InternalServer);
 * `code` uses the strings OpenAI and OpenCode recognise (`context_length_exceeded`, `insufficient_quota`,
 * `rate_limit_exceeded`, `model_not_found`). Messages are redacted and never carry a stack trace.
 */

import { isAbortError, ProxyError } from "../util/errors.js";
import { redactText } from "../util/logger.js";

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

/**
 * `detail` value a ProxyError carries when the proxy's own API key check failed, so the 401 does not tell the user
 * to log in to Cursor.
 */
export const LOCAL_API_KEY_DETAIL = "local_api_key";

const LOGIN_HINT = "Run `cursor-bridge login` to sign in to Cursor.";

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

/** Machine-readable `code` for a ProxyError; `detail` wins when it names a more specific reason. */
function codeFor(error: ProxyError): string | null {
  switch (error.code) {
    case "context_length_exceeded":
      return "context_length_exceeded";
    case "rate_limited":
      return "rate_limit_exceeded";
    case "quota_exceeded":
      return "insufficient_quota";
    case "unauthenticated":
      return "invalid_api_key";
    case "not_found":
      return error.detail === "model_not_found" ? "model_not_found" : (error.detail ?? null);
    case "backend_unavailable":
      return "upstream_unavailable";
    case "backend_protocol":
      return "upstream_error";
    case "timeout":
      return "upstream_timeout";
    case "canceled":
      return "request_canceled";
    default:
      if (error.status === 413) return "request_too_large";
      return error.detail ?? null;
  }
}

function typeFor(error: ProxyError): string {
  if (error.code === "quota_exceeded") return "insufficient_quota";
  if (error.code === "context_length_exceeded") return "invalid_request_error";
  return typeForStatus(error.status);
}

function messageFor(error: ProxyError): string {
  const message = redactText(error.message).trim() || "Request failed.";
  if (error.code === "unauthenticated" && error.detail !== LOCAL_API_KEY_DETAIL && !message.includes("login")) {
    return `${message} ${LOGIN_HINT}`;
  }
  return message;
}

/**
 * Converts anything thrown into the OpenAI error response. Non-ProxyError values become a generic 500 whose
 * message does not echo the original (it may hold internals); aborts become 499 `request_canceled`.
 */
export function toOpenAIError(error: unknown): OpenAIErrorResponse {
  const proxyError =
    error instanceof ProxyError
      ? error
      : isAbortError(error)
        ? ProxyError.from(error)
        : new ProxyError("internal", "Internal server error.", { cause: error });
  const headers: Record<string, string> = {};
  if (proxyError.retryAfterSeconds !== undefined && proxyError.retryAfterSeconds >= 0) {
    headers["Retry-After"] = String(Math.ceil(proxyError.retryAfterSeconds));
  }
  // SDKs retry a 409 by default; a conflict we call final must not come back (OpenAI's own header for that).
  if (proxyError.status === 409 && !proxyError.retryable) headers["x-should-retry"] = "false";
  return {
    status: proxyError.status,
    headers,
    body: {
      error: {
        message: messageFor(proxyError),
        type: typeFor(proxyError),
        param: proxyError.param ?? null,
        code: codeFor(proxyError),
      },
    },
  };
}
