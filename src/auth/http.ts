/**
 * Small HTTP helpers shared by the login poll and the token exchange: the injectable fetch type, per-request
 * timeouts combined with the caller's signal, the token-pair body check and status → ProxyError classification.
 * Response bodies never go into messages: they may carry tokens.
 */
import { ProxyError } from "../util/errors.js";

/** The subset of `fetch` the auth services use; inject a fake in tests. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Production default: the runtime's global fetch. */
export const defaultFetch: FetchLike = (input, init) => fetch(input, init);

/** An access/refresh token pair as Cursor returns it (§3.1 step 6, §3.2 variant A). */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
}

/**
 * `{accessToken, refreshToken}` (non-empty strings) plus whatever else the server adds, and its optional string
 * `authId`; undefined when the body is not that. Checked by hand, not with zod: a logged-in `serve` loads this module
 * before it prints its listening line.
 */
export function readTokenPairBody(body: unknown): (TokenPair & { authId?: string }) | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const { accessToken, refreshToken, authId } = body as Record<string, unknown>;
  if (typeof accessToken !== "string" || accessToken === "") return undefined;
  if (typeof refreshToken !== "string" || refreshToken === "") return undefined;
  if (authId !== undefined && typeof authId !== "string") return undefined;
  return authId === undefined ? { accessToken, refreshToken } : { accessToken, refreshToken, authId };
}

/** Default time one auth HTTP request may take. */
export const DEFAULT_AUTH_REQUEST_TIMEOUT_MS = 30_000;

/** The caller's signal (if any) combined with a per-request timeout. */
export function requestSignal(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
}

/** Joins a base URL and an absolute path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

/** Classifies a non-success HTTP status of an auth endpoint. */
export function errorForStatus(status: number, what: string): ProxyError {
  if (status === 401 || status === 403) {
    return new ProxyError("unauthenticated", `${what} was rejected by Cursor (HTTP ${status}).`, { status: 401 });
  }
  if (status === 429) return new ProxyError("rate_limited", `${what} was rate limited by Cursor (HTTP 429).`);
  if (status >= 500) return new ProxyError("backend_unavailable", `${what} failed: Cursor returned HTTP ${status}.`);
  return new ProxyError("backend_protocol", `${what} failed: Cursor returned unexpected HTTP ${status}.`);
}

/**
 * Maps a fetch rejection: the caller's abort becomes `canceled`, our own per-request timeout becomes `timeout`,
 * anything else (DNS, TLS, reset) is `backend_unavailable`.
 */
export function errorForFetchFailure(
  error: unknown,
  what: string,
  callerSignal: AbortSignal | undefined,
  url?: string,
): ProxyError {
  if (callerSignal?.aborted) return new ProxyError("canceled", `${what} was canceled.`, { cause: error });
  const name = typeof error === "object" && error !== null ? (error as { name?: unknown }).name : undefined;
  const where = url === undefined ? "" : ` at ${new URL(url).origin}`;
  if (name === "TimeoutError") return new ProxyError("timeout", `${what} timed out${where}.`, { cause: error });
  const reason = fetchFailureReason(error);
  return new ProxyError(
    "backend_unavailable",
    `${what} failed: could not reach Cursor${where}${reason === undefined ? "" : ` (${reason})`}.`,
    { cause: error },
  );
}

/**
 * Why a fetch failed, in a few words: the system error code (ECONNREFUSED, ENOTFOUND, ...) of the innermost cause
 * (undici throws "fetch failed" with the real error as its cause), else that cause's message. Never the request.
 */
export function fetchFailureReason(error: unknown): string | undefined {
  let current: unknown = error;
  let reason: string | undefined;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && code !== "") reason = code;
    else if (reason === undefined && typeof message === "string" && message !== "" && message !== "fetch failed") {
      reason = message;
    }
    current = cause;
  }
  return reason;
}

/** Reads a JSON body, returning undefined instead of throwing on malformed JSON. */
export async function readJsonBody(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}
