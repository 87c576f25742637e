/**
 * Outbound error edge for the Anthropic surface: ProxyError → `{type:"error", error:{type, message}}` with the status
 * and `error.type` Anthropic uses (invalid_request_error 400, authentication_error 401, permission_error 403,
 * not_found_error 404, request_too_large 413, rate_limit_error 429, api_error 500, overloaded_error 529). Messages
 * are redacted and never carry a stack trace. `x-should-retry: false` tells the Anthropic SDK (and Claude Code) not
 * to retry an error that cannot succeed on retry, such as an exhausted usage limit.
 */

import { withLauncher } from "../../util/command-hint.js";
import { isAbortError, ProxyError, type ProxyErrorDetails } from "../../util/errors.js";
import { redactText } from "../../util/logger.js";

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

/** `detail` of the local API key check's ProxyError (same value the OpenAI edge knows). */
const LOCAL_API_KEY_DETAIL = "local_api_key" satisfies ProxyErrorDetails["unauthenticated"];

function typeFor(error: ProxyError): string {
  const status = error.status;
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529 || error.code === "backend_unavailable") return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

function messageFor(error: ProxyError, requestId: string | undefined): string {
  // An internal error is a bug of ours: its message (an exception's text) stays in the log, never in the answer.
  if (error.code === "internal") {
    return requestId === undefined
      ? "Internal server error."
      : `Internal server error (request id ${requestId}; the server log has the details).`;
  }
  const message = withLauncher(redactText(error.message)).trim() || "Request failed.";
  if (error.code === "unauthenticated" && error.detail !== LOCAL_API_KEY_DETAIL && !message.includes("login")) {
    return withLauncher(`${message} Run \`cursor-bridge login\` to sign in to Cursor.`);
  }
  return message;
}

/**
 * Converts anything thrown into the Anthropic error response. Non-ProxyError values become a generic 500 whose
 * message does not echo the original; aborts keep their 499 (the client is gone and never reads it).
 */
export function toAnthropicError(
  error: unknown,
  context: { requestId?: string | undefined } = {},
): AnthropicErrorResponse {
  const proxyError =
    error instanceof ProxyError
      ? error
      : isAbortError(error)
        ? ProxyError.from(error)
        : new ProxyError("internal", "Internal server error.", { cause: error });
  const headers: Record<string, string> = {};
  if (proxyError.retryAfterSeconds !== undefined && proxyError.retryAfterSeconds >= 0) {
    headers["retry-after"] = String(Math.ceil(proxyError.retryAfterSeconds));
  }
  if (!proxyError.retryable) headers["x-should-retry"] = "false";
  return {
    status: proxyError.status,
    headers,
    body: { type: "error", error: { type: typeFor(proxyError), message: messageFor(proxyError, context.requestId) } },
  };
}
