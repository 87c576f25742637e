/**
 * Cursor access tokens from OpenCode's auth store. In plugin mode that store is the only credential store: an `oauth`
 * record (`{refresh, access, expires}`, from the browser login or an import) is refreshed here, single-flight, and
 * the rotated pair is written back with `client.auth.set` before the new access token is handed out, so a rotated
 * refresh token is never lost; an `api` record (`{key}`) is exchanged for a session in memory, exactly as
 * `cursor-bridge login --api-key` does, and re-exchanged before it expires. The bridge child only ever receives
 * access tokens.
 */
import {
  type CredentialStore,
  type CredentialsInput,
  createMemoryCredentialStore,
  createRefreshingTokenSource,
  type FetchLike,
  loginWithApiKey,
  type RefreshingTokenSource,
  type StoredCredentials,
} from "../auth/index.js";
import { ProxyError } from "../util/errors.js";
import { jwtExpiresAtMs } from "../util/jwt.js";
import { redactText } from "../util/logger.js";
import type { TokenSource } from "../util/token-source.js";
import type { OpenCodeAuth } from "./types.js";

/** OpenCode's provider id, and the key of its credential. */
export const PROVIDER_ID = "cursor";

/** Reading and writing the `cursor` entry of OpenCode's auth store. */
export interface AuthAccess {
  /** The stored credential as it is now (undefined when there is none). */
  read(): Promise<OpenCodeAuth | undefined>;
  /** Persists a credential (`client.auth.set`). */
  write(auth: OpenCodeAuth): Promise<void>;
}

/** Options of {@link createOpenCodeTokenSource}. */
export interface OpenCodeTokenSourceOptions {
  auth: AuthAccess;
  /** Cursor's API base URL (CURSOR_API_URL). */
  apiUrl: string;
  fetch?: FetchLike;
  /** @default Date.now */
  now?: () => number;
}

/** An access token's expiry for OpenCode's `expires` field: the JWT's `exp`, else an hour from now. */
export function expiresOf(accessToken: string, now: number): number {
  return jwtExpiresAtMs(accessToken) ?? now + 3_600_000;
}

/** The OpenCode record of a token pair. */
export function oauthRecord(pair: { accessToken: string; refreshToken: string }, now: number): OpenCodeAuth {
  return {
    type: "oauth",
    refresh: pair.refreshToken,
    access: pair.accessToken,
    expires: expiresOf(pair.accessToken, now),
  };
}

function notLoggedIn(): ProxyError {
  return new ProxyError(
    "unauthenticated",
    "Not logged in to Cursor in OpenCode: run `opencode auth login` and choose Cursor.",
    { detail: "not_logged_in" },
  );
}

/** OpenCode's `oauth` record seen as cursor-bridge's credential store, so the shared refresh logic applies. */
function oauthStore(access: AuthAccess, now: () => number): CredentialStore {
  const stored = (input: CredentialsInput): StoredCredentials => ({
    ...input,
    version: 1,
    savedAt: new Date(now()).toISOString(),
  });
  return {
    location: "OpenCode's auth store (provider cursor)",
    async load() {
      const auth = await access.read();
      if (auth?.type !== "oauth") return undefined;
      return stored({ accessToken: auth.access, refreshToken: auth.refresh, source: "login" });
    },
    async save(input) {
      await access.write(oauthRecord(input, now()));
      return stored(input);
    },
    async clear() {
      return false;
    },
  };
}

/** Rewords "run `cursor-bridge login`" for plugin users; keeps code, detail and retryability. */
function forOpenCode(error: unknown, credential: "api" | "oauth" | undefined): ProxyError {
  const proxyError = ProxyError.from(error);
  if (proxyError.code !== "unauthenticated" || proxyError.detail === "not_logged_in") return proxyError;
  if (credential === "api") {
    return new ProxyError(
      "unauthenticated",
      `Cursor rejected the API key stored for provider cursor (${redactText(proxyError.message)}). Run \`opencode auth login\`, choose cursor, then "Cursor API key", and paste a current key from cursor.com → Dashboard → Integrations → User API Keys.`,
      { cause: proxyError, retryable: false, detail: "credentials_rejected" },
    );
  }
  return new ProxyError(
    "unauthenticated",
    "Cursor rejected the stored login; run `opencode auth login` and choose Cursor again.",
    { cause: proxyError, retryable: proxyError.retryable, detail: "credentials_rejected" },
  );
}

/** The TokenSource the plugin answers the bridge child's token requests from. */
export function createOpenCodeTokenSource(options: OpenCodeTokenSourceOptions): TokenSource {
  const now = options.now ?? Date.now;
  const fetchOption = options.fetch === undefined ? {} : { fetch: options.fetch };
  // One source per credential: switching between an API key and a login (or to another key) starts afresh.
  let current: { identity: string; source: Promise<RefreshingTokenSource> } | undefined;
  /** The kind of the credential last read: a rejected API key gets its own message. */
  let credentialType: "api" | "oauth" | undefined;

  const sourceFor = async (signal?: AbortSignal): Promise<RefreshingTokenSource> => {
    const auth = await options.auth.read();
    if (auth === undefined || auth.type === "wellknown") throw notLoggedIn();
    credentialType = auth.type;
    const identity = auth.type === "api" ? `api:${auth.key}` : "oauth";
    if (current?.identity === identity) return current.source;
    const build = async (): Promise<RefreshingTokenSource> => {
      if (auth.type === "oauth") {
        return createRefreshingTokenSource({
          store: oauthStore(options.auth, now),
          apiUrl: options.apiUrl,
          now,
          ...fetchOption,
        });
      }
      const store = createMemoryCredentialStore();
      await loginWithApiKey(auth.key, {
        store,
        apiUrl: options.apiUrl,
        now,
        ...fetchOption,
        ...(signal ? { signal } : {}),
      });
      return createRefreshingTokenSource({ store, apiUrl: options.apiUrl, now, ...fetchOption });
    };
    const source = build();
    current = { identity, source };
    source.catch(() => {
      if (current?.source === source) current = undefined;
    });
    return source;
  };

  return {
    async getAccessToken(signal) {
      try {
        return await (await sourceFor(signal)).getAccessToken(signal);
      } catch (error) {
        throw forOpenCode(error, credentialType);
      }
    },
    async refreshAfterUnauthenticated(rejected, signal) {
      try {
        return await (await sourceFor(signal)).refreshAfterUnauthenticated(rejected, signal);
      } catch (error) {
        throw forOpenCode(error, credentialType);
      }
    },
  };
}
