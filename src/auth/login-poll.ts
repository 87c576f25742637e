/**
 * Waits for the user to approve a browser login by polling `GET <apiUrl>/auth/poll?uuid=…&verifier=…`
 * (docs/protocol.md §3.1 step 5). 404 means "not yet"; the official schedule is up to 150 attempts with a delay of
 * min(1000·1.2^attempt, 10000) ms, giving up after 3 consecutive non-404 errors. Sleep, clock and fetch are injected
 * so the whole schedule runs instantly in tests.
 */
import { isAbortError, ProxyError } from "../util/errors.js";
import {
  DEFAULT_AUTH_REQUEST_TIMEOUT_MS,
  defaultFetch,
  errorForFetchFailure,
  errorForStatus,
  type FetchLike,
  joinUrl,
  readJsonBody,
  readTokenPairBody,
  requestSignal,
  type TokenPair,
} from "./http.js";

/** Tokens returned by a completed login; `authId` is e.g. `auth0|user_01ABC` when the server sends it (§3.1 step 6). */
export interface LoginTokens extends TokenPair {
  authId?: string;
}

/** Progress of the poll, for a spinner. */
export interface PollProgress {
  /** Zero-based number of the request just answered "pending". */
  attempt: number;
  elapsedMs: number;
}

/** Options of {@link pollForLogin}. */
export interface PollForLoginOptions {
  /** Cursor API base URL, e.g. https://api2.cursor.sh. */
  apiUrl: string;
  uuid: string;
  verifier: string;
  /** @default global fetch */
  fetch?: FetchLike;
  /** Waits `ms` or rejects when `signal` aborts. @default a setTimeout-based sleep */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** @default Date.now */
  now?: () => number;
  signal?: AbortSignal;
  /** Called after every "pending" answer. */
  onProgress?: (progress: PollProgress) => void;
  /** @default 150 (official CLI) */
  maxAttempts?: number;
  /** @default 3 (official CLI) */
  maxConsecutiveErrors?: number;
  /** Delay after attempt n. @default {@link officialPollDelayMs} */
  delayMs?: (attempt: number) => number;
  /** Per-request timeout. @default 30000 */
  requestTimeoutMs?: number;
}

/** The official CLI's back-off: min(1000·1.2^attempt, 10000) ms (§3.1 step 5). */
export function officialPollDelayMs(attempt: number): number {
  return Math.min(1000 * 1.2 ** attempt, 10_000);
}

/** Production sleep: a timer that is cleared when the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

type AttemptOutcome =
  | { kind: "done"; tokens: LoginTokens }
  | { kind: "pending" }
  | { kind: "error"; error: ProxyError };

async function pollOnce(options: PollForLoginOptions, fetchImpl: FetchLike): Promise<AttemptOutcome> {
  const url = new URL(joinUrl(options.apiUrl, "/auth/poll"));
  url.searchParams.set("uuid", options.uuid);
  url.searchParams.set("verifier", options.verifier);
  let response: Response;
  try {
    response = await fetchImpl(url.toString(), {
      method: "GET",
      headers: { accept: "application/json" },
      signal: requestSignal(options.signal, options.requestTimeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    return {
      kind: "error",
      error: errorForFetchFailure(error, "Polling the login status", options.signal, options.apiUrl),
    };
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return { kind: "pending" };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { kind: "error", error: errorForStatus(response.status, "Polling the login status") };
  }
  const parsed = readTokenPairBody(await readJsonBody(response));
  if (parsed === undefined) {
    const error = new ProxyError(
      "backend_protocol",
      "The login poll answered 200 without an access and refresh token.",
    );
    return { kind: "error", error };
  }
  const { accessToken, refreshToken, authId } = parsed;
  return {
    kind: "done",
    tokens: authId === undefined ? { accessToken, refreshToken } : { accessToken, refreshToken, authId },
  };
}

function throwIfCanceled(signal: AbortSignal | undefined, cause?: unknown): void {
  if (signal?.aborted || (cause !== undefined && isAbortError(cause))) {
    throw new ProxyError("canceled", "Login was canceled.", { cause: cause ?? signal?.reason });
  }
}

/**
 * Polls until the user approves the login, then returns the tokens.
 * @throws ProxyError `timeout` after maxAttempts pending answers, `canceled` on abort, or the last error's code after
 * maxConsecutiveErrors non-404 failures in a row.
 */
export async function pollForLogin(options: PollForLoginOptions): Promise<LoginTokens> {
  const fetchImpl = options.fetch ?? defaultFetch;
  const sleep = options.sleep ?? abortableSleep;
  const now = options.now ?? Date.now;
  const delayMs = options.delayMs ?? officialPollDelayMs;
  const maxAttempts = options.maxAttempts ?? 150;
  const maxConsecutiveErrors = options.maxConsecutiveErrors ?? 3;
  const startedAt = now();
  let consecutiveErrors = 0;
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    throwIfCanceled(options.signal);
    const outcome = await pollOnce(options, fetchImpl);
    throwIfCanceled(options.signal);
    if (outcome.kind === "done") return outcome.tokens;
    if (outcome.kind === "pending") {
      consecutiveErrors = 0;
      options.onProgress?.({ attempt, elapsedMs: now() - startedAt });
    } else if (++consecutiveErrors >= maxConsecutiveErrors) {
      throw new ProxyError(
        outcome.error.code,
        `Login failed after ${consecutiveErrors} consecutive errors while waiting for approval: ${outcome.error.message}`,
        { cause: outcome.error },
      );
    }
    if (attempt + 1 < maxAttempts) {
      try {
        await sleep(delayMs(attempt), options.signal);
      } catch (error) {
        throwIfCanceled(options.signal, error);
        throw error;
      }
    }
  }
  const minutes = Math.max(1, Math.round((now() - startedAt) / 60_000));
  throw new ProxyError(
    "timeout",
    `Login was not approved in the browser within ${minutes} minute(s) (${maxAttempts} checks). Run \`cursor-bridge login\` again.`,
    { retryable: false },
  );
}
