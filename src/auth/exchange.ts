/**
 * Token exchange, variant A of docs/protocol.md §3.2: `POST <apiUrl>/auth/exchange_user_api_key` with
 * `Authorization: Bearer <apiKey or refreshToken>`, JSON body `{}`, answering `{accessToken, refreshToken}`.
 * The official CLI uses it for API keys; current third-party clients use it with the refresh token to refresh OAuth
 * sessions, which is how cursor-bridge refreshes too.
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
    throw errorForFetchFailure(error, WHAT, options.signal);
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
