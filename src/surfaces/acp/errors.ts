/**
 * A failed prompt as the JSON-RPC error the editor shows. The message is the kit's decision for the error
 * (kit/error-policy.ts, in the ACP wording: a context overflow says the conversation is too long), never JSON-RPC's
 * bare "Internal error" for a failure the bridge knows the kind of: only a bug of the bridge's is `-32603`.
 * Each kind has a code of its own; `data` carries the bridge's error code, reason and whether a retry can help.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import { decideError } from "../kit/error-policy.js";
import { ACP_ERROR_CODES } from "./wire.js";

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
