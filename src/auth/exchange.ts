/**
 * Token exchange, variant A of docs/protocol.md §3.2: `POST <apiUrl>/auth/exchange_user_api_key` with
 * `Authorization: Bearer <apiKey or refreshToken>`, JSON body `{}`, answering `{accessToken, refreshToken}`.
 * It takes API keys only: it answers 401 "Invalid User API Key" to a browser login's tokens
 * (cursor-protocol-addendum-3.md X8), which refresh through {@link refreshOAuthLogin} instead.
 */
import { ProxyError } from "../util/errors.js";
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

/** Options of {@link exchangeForTokens}. */
export interface ExchangeOptions {
  /** Cursor API base URL. @default "https://api2.cursor.sh" via config */
  apiUrl: string;
  /** @default global fetch */
  fetch?: FetchLike;
  signal?: AbortSignal;
  /** @default 30000 */
  timeoutMs?: number;
}

/** The signature the token source depends on, so tests can replace the whole exchange. */
export type ExchangeFunction = (credential: string, signal?: AbortSignal) => Promise<TokenPair>;

const WHAT = "Exchanging the Cursor credentials for a session";

/**
 * Exchanges an API key or refresh token for a fresh token pair.
 * @throws ProxyError `unauthenticated` (401/403, message tells the user to log in again), `rate_limited`,
 * `backend_unavailable`, `backend_protocol`, `timeout` or `canceled`.
 */
export async function exchangeForTokens(credential: string, options: ExchangeOptions): Promise<TokenPair> {
  const fetchImpl = options.fetch ?? defaultFetch;
  let response: Response;
  try {
    response = await fetchImpl(joinUrl(options.apiUrl, "/auth/exchange_user_api_key"), {
      method: "POST",
      headers: {
        authorization: `Bearer ${credential}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: "{}",
      signal: requestSignal(options.signal, options.timeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw errorForFetchFailure(error, WHAT, options.signal, options.apiUrl);
  }
  if (!response.ok) {
    await response.body?.cancel();
    const error = errorForStatus(response.status, WHAT);
    if (error.code === "unauthenticated") {
      throw new ProxyError(
        "unauthenticated",
        `Cursor rejected the stored credentials (HTTP ${response.status}); run \`cursor-bridge login\`.`,
        { cause: error, detail: "credentials_rejected" },
      );
    }
    throw error;
  }
  const pair = readTokenPairBody(await readJsonBody(response));
  if (pair === undefined) {
    throw new ProxyError("backend_protocol", `${WHAT} failed: the answer had no access and refresh token.`);
  }
  return { accessToken: pair.accessToken, refreshToken: pair.refreshToken };
}

/** Binds {@link exchangeForTokens} to fixed options, for injection into the token source. */
export function createExchange(options: Omit<ExchangeOptions, "signal">): ExchangeFunction {
  return (credential, signal) => exchangeForTokens(credential, signal === undefined ? options : { ...options, signal });
}

/** Cursor's public OAuth client id, which its own clients refresh with (cursor-protocol-addendum-3.md X8). */
export const CURSOR_OAUTH_CLIENT_ID = "KbZUR41cY7W6zRSdpSUJ7I7mLYBKOCmB";

/**
 * What a refresh answers: a new access token; a new refresh token only when Cursor rotates it (its OAuth refresh does
 * not: the stored one stays); `shouldLogout` when Cursor ended the login.
 */
export interface RefreshResult {
  accessToken: string;
  refreshToken?: string;
  shouldLogout?: boolean;
}

/** A refresh of one kind of login, injectable for tests. */
export type RefreshFunction = (credential: string, signal?: AbortSignal) => Promise<RefreshResult>;

const OAUTH_WHAT = "Refreshing the Cursor login";

/**
 * Refreshes a browser login: `POST <apiUrl>/oauth/token` with `{grant_type: "refresh_token", client_id,
 * refresh_token}` (cursor-protocol-addendum-3.md X8; the exchange endpoint refuses browser-login tokens with 401).
 * The answer is `{access_token, shouldLogout}`, a refresh token only if Cursor ever rotates it.
 * @throws ProxyError as {@link exchangeForTokens}.
 */
export async function refreshOAuthLogin(refreshToken: string, options: ExchangeOptions): Promise<RefreshResult> {
  const fetchImpl = options.fetch ?? defaultFetch;
  let response: Response;
  try {
    response = await fetchImpl(joinUrl(options.apiUrl, "/oauth/token"), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({
        grant_type: "refresh_token",
        client_id: CURSOR_OAUTH_CLIENT_ID,
        refresh_token: refreshToken,
      }),
      signal: requestSignal(options.signal, options.timeoutMs ?? DEFAULT_AUTH_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw errorForFetchFailure(error, OAUTH_WHAT, options.signal, options.apiUrl);
  }
  const body = await readJsonBody(response);
  const fields =
    typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (fields.shouldLogout === true) return { accessToken: "", shouldLogout: true };
  // OAuth's refusal of a refresh token (RFC 6749 §5.2: revoked, expired or not this client's), whatever the status.
  if (fields.error === "invalid_grant") {
    throw new ProxyError(
      "unauthenticated",
      `Cursor rejected the stored login (HTTP ${response.status}, invalid_grant); run \`cursor-bridge login\`.`,
      { detail: "credentials_rejected" },
    );
  }
  if (!response.ok) {
    const error = errorForStatus(response.status, OAUTH_WHAT);
    if (error.code === "unauthenticated") {
      throw new ProxyError(
        "unauthenticated",
        `Cursor rejected the stored login (HTTP ${response.status}); run \`cursor-bridge login\`.`,
        { cause: error, detail: "credentials_rejected" },
      );
    }
    throw error;
  }
  const accessToken = fields.access_token ?? fields.accessToken;
  if (typeof accessToken !== "string" || accessToken === "") {
    throw new ProxyError("backend_protocol", `${OAUTH_WHAT} failed: the answer had no access token.`);
  }
  const rotatedToken = fields.refresh_token ?? fields.refreshToken;
  return typeof rotatedToken === "string" && rotatedToken !== ""
    ? { accessToken, refreshToken: rotatedToken }
    : { accessToken };
}

/** Binds {@link refreshOAuthLogin} to fixed options, for injection into the token source. */
export function createOAuthRefresh(options: Omit<ExchangeOptions, "signal">): RefreshFunction {
  return (credential, signal) => refreshOAuthLogin(credential, signal === undefined ? options : { ...options, signal });
}
