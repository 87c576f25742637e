/**
 * TokenSource implementations. The refreshing source reads the credential store, refreshes on the request path when
 * the JWT `exp` is within the skew (official CLI: 300 s, docs/protocol.md §3.3): a browser login through
 * `POST /oauth/token` with its refresh token (§3.2), an API-key login through the exchange endpoint with the key.
 * Refreshes are single-flight (across processes too, through the store lock) and there are no timers: nothing runs
 * unless a caller asks for a token. A login removed from the store (`cursor-bridge logout`, or Cursor's
 * `shouldLogout`) stays removed: the source notices on the next call, answers "not logged in" and never writes the
 * removed tokens back.
 */

import { createMemoryLock } from "../stores/memory/lock.js";
import type { CredentialStore, CredentialsInput, StoredCredentials, StoreLock } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { jwtExpiresAtMs, readJwtClaims, userIdFromSubject } from "../util/jwt.js";
import { type Logger, silentLogger } from "../util/logger.js";
import type { TokenSource } from "../util/token-source.js";
import type { RefreshResult } from "./exchange.js";
import { createExchange, createOAuthRefresh, type RefreshFunction } from "./exchange.js";
import type { FetchLike } from "./http.js";

/** Cursor's API base URL, where `/auth/*` lives (§1.1). */
export const DEFAULT_CURSOR_API_URL = "https://api2.cursor.sh";

/** Refresh this long before `exp` (official CLI: 300 s, §3.3). */
export const DEFAULT_REFRESH_SKEW_MS = 5 * 60_000;

/** Options of {@link createRefreshingTokenSource}. */
export interface RefreshingTokenSourceOptions {
  store: CredentialStore;
  /**
   * Replaces the API-key exchange (tests); also the browser-login refresh unless {@link oauthRefresh} is given.
   * @default exchangeForTokens against apiUrl
   */
  exchange?: RefreshFunction;
  /** Replaces the browser-login refresh (tests). @default refreshOAuthLogin against apiUrl */
  oauthRefresh?: RefreshFunction;
  /** @default "https://api2.cursor.sh" */
  apiUrl?: string;
  /** @default global fetch */
  fetch?: FetchLike;
  /** @default Date.now */
  now?: () => number;
  /** @default 300000 */
  refreshSkewMs?: number;
  /** @default silentLogger */
  logger?: Logger;
  /**
   * Runs a refresh while holding a lock shared with other processes using the same store (instances sharing one
   * login): the refresh re-reads the store first, so tokens another process just rotated are used, never refreshed
   * again with a spent refresh token. @default an in-process lock (this process's single-flight only)
   */
  refreshLock?: StoreLock;
}

/** A TokenSource backed by a credential store. */
export interface RefreshingTokenSource extends TokenSource {
  /** The credentials currently in use (after any refresh); for `status`. Never print the tokens. */
  currentCredentials(signal?: AbortSignal): Promise<StoredCredentials>;
}

function canceled(reason: unknown): ProxyError {
  return new ProxyError("canceled", "The request was canceled while waiting for a Cursor token.", { cause: reason });
}

/** Lets one caller stop waiting without canceling the shared work behind `promise`. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(canceled(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(canceled(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function notLoggedIn(location: string): ProxyError {
  return new ProxyError(
    "unauthenticated",
    `No Cursor credentials found (looked in ${location}); run \`cursor-bridge login\` first.`,
    { detail: "not_logged_in" },
  );
}

/**
 * Failures of a refresh that say nothing about the login: Cursor unreachable or answering 5xx, the refresh timing out
 * or rate limited (and the wait for it canceled). Anything else (401/403, any other 4xx such as OAuth's 400
 * `invalid_grant` for a revoked refresh token, an answer without a token) means Cursor did not renew this login.
 */
const KEEPS_LOGIN: ReadonlySet<ProxyError["code"]> = new Set([
  "backend_unavailable",
  "timeout",
  "rate_limited",
  "canceled",
]);

/**
 * A refresh that failed. A transient failure ({@link KEEPS_LOGIN}) keeps its own code (a retryable 503/504/429 for
 * the client) and the stored login, which the next request tries to renew again; any other failure means Cursor
 * refused the renewal, and the user must log in again.
 */
function refreshFailed(error: ProxyError): ProxyError {
  if (KEEPS_LOGIN.has(error.code)) {
    return new ProxyError(
      error.code,
      `${error.message} The Cursor session needs renewing; the login is kept, retry shortly.`,
      {
        cause: error,
        retryable: error.retryable,
        ...(error.detail === undefined ? {} : { detail: error.detail as never }),
        ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
      },
    );
  }
  return new ProxyError("unauthenticated", "Cursor refused to renew the session; run `cursor-bridge login` again.", {
    cause: error,
    retryable: false,
    detail: "refresh_failed",
  });
}

/** The stored record with rotated tokens; identity claims of the new token win over the old ones. */
function rotated(before: StoredCredentials, accessToken: string, refreshToken: string): CredentialsInput {
  const { version: _version, savedAt: _savedAt, ...rest } = before;
  const claims = readJwtClaims(accessToken);
  const email = claims?.email ?? before.email;
  const userId = userIdFromSubject(claims?.sub) ?? before.userId;
  return {
    ...rest,
    accessToken,
    refreshToken,
    ...(email === undefined ? {} : { email }),
    ...(userId === undefined ? {} : { userId }),
  };
}

/** The production TokenSource: store-backed, refreshing, single-flight. */
export function createRefreshingTokenSource(options: RefreshingTokenSourceOptions): RefreshingTokenSource {
  const { store } = options;
  const lock = options.refreshLock ?? createMemoryLock();
  const http = {
    apiUrl: options.apiUrl ?? DEFAULT_CURSOR_API_URL,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
  const exchange: RefreshFunction = options.exchange ?? createExchange(http);
  const oauthRefresh: RefreshFunction = options.oauthRefresh ?? options.exchange ?? createOAuthRefresh(http);
  const now = options.now ?? Date.now;
  const skewMs = options.refreshSkewMs ?? DEFAULT_REFRESH_SKEW_MS;
  const logger = options.logger ?? silentLogger;
  let cached: StoredCredentials | undefined;
  let loading: Promise<StoredCredentials> | undefined;
  let inFlight: Promise<string> | undefined;
  let checking: Promise<StoredCredentials> | undefined;

  const expiresSoon = (token: string): boolean => {
    const expiresAt = jwtExpiresAtMs(token);
    return expiresAt !== undefined && expiresAt - now() < skewMs;
  };
  const isExpired = (token: string): boolean => {
    const expiresAt = jwtExpiresAtMs(token);
    return expiresAt !== undefined && expiresAt <= now();
  };

  /**
   * The credentials, checked against the store on every call (one read shared by concurrent callers): a login
   * removed there is gone here too, and tokens another process stored later (a refresh, a new login) are adopted.
   */
  function current(): Promise<StoredCredentials> {
    if (cached !== undefined) {
      checking ??= store
        .load()
        .then((loaded) => {
          if (loaded === undefined) {
            cached = undefined;
            throw notLoggedIn(store.location);
          }
          // Tokens stored since (another process's refresh, a new login) replace ours, unless they are the stale ones
          // a failed save of ours left there.
          if (cached === undefined || (loaded.accessToken !== cached.accessToken && !expiresSoon(loaded.accessToken))) {
            cached = loaded;
          }
          return cached;
        })
        .finally(() => {
          checking = undefined;
        });
      return checking;
    }
    loading ??= store
      .load()
      .then((loaded) => {
        if (loaded === undefined) throw notLoggedIn(store.location);
        cached ??= loaded;
        return cached;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  }

  /** Cursor ended the login (`shouldLogout`): it is removed, and the user told to log in again. */
  async function loggedOutByCursor(): Promise<never> {
    cached = undefined;
    await store.clear().catch((error: unknown) => {
      logger.warn("could not remove the Cursor login Cursor ended", { code: ProxyError.from(error).code });
    });
    logger.warn("Cursor ended this login (shouldLogout); it was removed: run `cursor-bridge login`");
    throw new ProxyError(
      "unauthenticated",
      "Cursor ended this login (it answered the refresh with shouldLogout), so it was removed; run `cursor-bridge login` again.",
      { detail: "credentials_rejected" },
    );
  }

  async function persist(before: StoredCredentials, accessToken: string, refreshToken: string): Promise<void> {
    const next = rotated(before, accessToken, refreshToken);
    cached = { ...next, version: 1, savedAt: new Date(now()).toISOString() };
    try {
      cached = await store.save(next);
    } catch (error) {
      // The new tokens still work for this process; say so loudly because the next start needs them.
      logger.warn("could not persist refreshed Cursor tokens", { code: ProxyError.from(error).code });
    }
  }

  async function doRefresh(forced: boolean): Promise<string> {
    // The tokens the caller found too old (current() below adopts what the store holds now).
    const held = cached;
    const before = held ?? (await current());
    // Another process (e.g. a fresh `cursor-bridge login`) may have stored newer tokens than the ones we hold; or the
    // user logged out, and the removed login must not come back.
    const onDisk = await store.load();
    if (onDisk === undefined) {
      cached = undefined;
      throw notLoggedIn(store.location);
    }
    if (onDisk.accessToken !== before.accessToken && !expiresSoon(onDisk.accessToken)) {
      cached = onDisk;
      return onDisk.accessToken;
    }
    // Tokens another process rotated since we loaded ours: refresh from those (our refresh token may be spent).
    const base = onDisk.refreshToken !== before.refreshToken ? onDisk : before;
    const apiKey = base.source === "api-key" ? base.apiKey : undefined;
    let pair: RefreshResult;
    try {
      pair = apiKey !== undefined ? await exchange(apiKey) : await oauthRefresh(base.refreshToken);
    } catch (error) {
      const proxyError = ProxyError.from(error);
      if (!forced && KEEPS_LOGIN.has(proxyError.code) && !isExpired(base.accessToken)) {
        // A transient failure while the token is still valid: keep using it, the next call retries.
        logger.warn("Cursor token refresh failed; using the current token until it expires", { code: proxyError.code });
        cached = base;
        return base.accessToken;
      }
      throw refreshFailed(proxyError);
    }
    if (pair.shouldLogout === true) return loggedOutByCursor();
    // Logged out while the refresh ran: the new tokens die with the login.
    if ((await store.load()) === undefined) {
      cached = undefined;
      throw notLoggedIn(store.location);
    }
    // Cursor's OAuth refresh keeps the refresh token: the stored one stays when the answer has none.
    await persist(base, pair.accessToken, pair.refreshToken ?? base.refreshToken);
    logger.info("refreshed Cursor session", { source: base.source });
    return pair.accessToken;
  }

  function refresh(forced: boolean): Promise<string> {
    inFlight ??= lock(() => doRefresh(forced)).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  return {
    async getAccessToken(signal) {
      const credentials = await untilAborted(current(), signal);
      if (!expiresSoon(credentials.accessToken)) return credentials.accessToken;
      return untilAborted(refresh(false), signal);
    },
    async refreshAfterUnauthenticated(rejectedToken, signal) {
      const credentials = await untilAborted(current(), signal);
      if (credentials.accessToken !== rejectedToken) return credentials.accessToken;
      if (inFlight !== undefined) {
        const token = await untilAborted(inFlight, signal);
        if (token !== rejectedToken) return token;
      }
      const latest = await untilAborted(current(), signal);
      if (latest.accessToken !== rejectedToken) return latest.accessToken;
      const token = await untilAborted(refresh(true), signal);
      if (token === rejectedToken) {
        throw new ProxyError("unauthenticated", "Cursor rejected the session; run `cursor-bridge login` again.", {
          detail: "refresh_failed",
        });
      }
      return token;
    },
    currentCredentials(signal) {
      return untilAborted(current(), signal);
    },
  };
}

/** Options of {@link createStaticTokenSource}. */
export interface StaticTokenSourceOptions {
  /** Where the token came from, for messages. @default "CURSOR_ACCESS_TOKEN" */
  origin?: string;
  /** @default Date.now */
  now?: () => number;
}

/** A fixed token (e.g. from CURSOR_ACCESS_TOKEN): never refreshed, fails clearly once expired or rejected. */
export function createStaticTokenSource(token: string, options: StaticTokenSourceOptions = {}): TokenSource {
  const origin = options.origin ?? "CURSOR_ACCESS_TOKEN";
  const now = options.now ?? Date.now;
  return {
    async getAccessToken() {
      const expiresAt = jwtExpiresAtMs(token);
      if (expiresAt !== undefined && expiresAt <= now()) {
        throw new ProxyError(
          "unauthenticated",
          `The access token from ${origin} has expired; set a fresh one or run \`cursor-bridge login\`.`,
          { detail: "token_expired" },
        );
      }
      return token;
    },
    async refreshAfterUnauthenticated() {
      throw new ProxyError(
        "unauthenticated",
        `Cursor rejected the access token from ${origin}, which cannot be refreshed; set a fresh one or run \`cursor-bridge login\`.`,
        { detail: "refresh_unavailable" },
      );
    },
  };
}
