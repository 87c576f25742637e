/**
 * The one place Cursor request headers are built (docs/protocol.md §2.1). Every call carries them; the HTTP/1.1
 * "BidiSse" path adds `x-cursor-streaming: true`. `connect-protocol-version` and `content-type` are added by
 * connect-es on its (unary) calls and by {@link connectStreamHeaders} on the hand-framed `Run` and RunSSE requests.
 */
import { redact } from "../../util/logger.js";

/** Inputs of {@link buildCursorHeaders}. */
export interface CursorHeaderInput {
  accessToken: string;
  clientVersion: string;
  ghostMode: boolean;
  requestId: string;
  /** True on the HTTP/1.1 RunSSE + BidiAppend path (§2.1 `x-cursor-streaming`). */
  streaming?: boolean;
}

/**
 * The last `authorization` value, reused while the token is unchanged: Node keeps every open HTTP/2 stream's sent
 * headers, and a fresh concatenation per call would give each parked turn its own copy of the (long) JWT.
 */
let lastAuthorization = { token: "", value: "" };

function authorizationFor(token: string): string {
  if (lastAuthorization.token !== token) lastAuthorization = { token, value: `Bearer ${token}` };
  return lastAuthorization.value;
}

/** Headers of §2.1 for one call. */
export function buildCursorHeaders(input: CursorHeaderInput): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: authorizationFor(input.accessToken),
    "x-cursor-client-type": "cli",
    "x-cursor-client-version": input.clientVersion,
    "x-ghost-mode": input.ghostMode ? "true" : "false",
    "x-request-id": input.requestId,
  };
  if (input.streaming === true) headers["x-cursor-streaming"] = "true";
  return headers;
}

/** Extra headers of a hand-framed Connect streaming request (§2.3, §4.3 step 2). */
export function connectStreamHeaders(): Record<string, string> {
  return { "content-type": "application/connect+proto", "connect-protocol-version": "1" };
}

/** Headers as a loggable object: the bearer token is redacted (never log a token). */
export function headersForLog(headers: Record<string, string> | Headers): Record<string, unknown> {
  const plain: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, key) => {
      plain[key] = value;
    });
  } else Object.assign(plain, headers);
  return redact(plain) as Record<string, unknown>;
}
