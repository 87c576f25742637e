/**
 * A failed prompt as the JSON-RPC error the editor shows. The message is the kit's decision for the error
 * (kit/error-policy.ts, in the ACP wording: a context overflow says the conversation is too long), never JSON-RPC's
 * bare "Internal error" for a failure the bridge knows the kind of: only a bug of the bridge's is `-32603`.
 * Each kind has a code of its own; `data` carries the bridge's error code, reason and whether a retry can help.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import type { ProxyErrorCode } from "../../util/errors.js";
import { decideError } from "../kit/error-policy.js";

/** JSON-RPC codes by kind. -32000 and -32002 are ACP's (auth required, resource not found); -32800 is cancelled. */
export const ACP_ERROR_CODES: Readonly<Record<ProxyErrorCode, number>> = {
  invalid_request: -32602,
  request_too_large: -32602,
  unsupported_media_type: -32602,
  not_found: -32602,
  unauthenticated: -32000,
  context_length_exceeded: -32010,
  quota_exceeded: -32011,
  key_budget_exceeded: -32011,
  rate_limited: -32012,
  permission_denied: -32013,
  backend_unavailable: -32014,
  backend_protocol: -32015,
  timeout: -32016,
  canceled: -32800,
  internal: -32603,
};

/** Anything thrown by a prompt → the RequestError answered (a RequestError passes through). */
export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const decision = decideError(error, { dialect: "acp" });
  const proxy = decision.error;
  const data: Record<string, unknown> = { code: proxy.code, retryable: proxy.retryable };
  if (proxy.detail !== undefined) data.detail = proxy.detail;
  if (proxy.retryAfterSeconds !== undefined) data.retryAfterSeconds = proxy.retryAfterSeconds;
  if (proxy.contextLength !== undefined) data.contextLength = proxy.contextLength;
  if (proxy.code === "unauthenticated") return RequestError.authRequired(data, decision.message);
  const code = ACP_ERROR_CODES[proxy.code];
  if (code === -32602) return RequestError.invalidParams(data, decision.message);
  if (code === -32603) return RequestError.internalError(data, decision.message);
  return new RequestError(code, decision.message, data);
}
