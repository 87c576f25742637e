import { describe, expect, it } from "vitest";
import { createMemoryCredentialStore } from "../stores/memory/credential-store.js";
import type { CredentialStore, CredentialsInput, StoredCredentials } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import type { TokenPair } from "./http.js";
import { createRefreshingTokenSource, createStaticTokenSource } from "./token-source.js";

const NOW = 1_800_000_000_000;
const now = () => NOW;

function makeJwt(payload: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "HS256", typ: "JWT" })}.${encode(payload)}.c2ln`;
}
/** A token expiring `minutes` from NOW, distinguishable by `tag`. */
const tokenExpiringIn = (minutes: number, tag: string) =>
  makeJwt({ exp: (NOW + minutes * 60_000) / 1000, sub: `auth0|user_${tag}`, randomness: tag });

function record(overrides: Partial<StoredCredentials> = {}): StoredCredentials {
  return {
    version: 1,
    accessToken: tokenExpiringIn(60, "old"),
    refreshToken: "refresh-old",
    source: "login",
    email: "a@example.com",
    savedAt: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
}

/** An exchange whose answers the test releases, counting calls. */
function controlledExchange(answer: (credential: string, call: number) => TokenPair | Error) {
  const credentials: string[] = [];
  const exchange = async (credential: string): Promise<TokenPair> => {
    credentials.push(credential);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const result = answer(credential, credentials.length);
    if (result instanceof Error) throw result;
    return result;
  };
  return { exchange, credentials };
}

const fresh = (tag: string): TokenPair => ({ accessToken: tokenExpiringIn(60, tag), refreshToken: `refresh-${tag}` });

describe("createRefreshingTokenSource", () => {
  it("returns the stored token without refreshing while it is valid", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const store = createMemoryCredentialStore(record());
    const source = createRefreshingTokenSource({ store, exchange, now });
    await expect(source.getAccessToken()).resolves.toBe(record().accessToken);
    expect(credentials).toHaveLength(0);
  });

  it("refreshes once for 20 concurrent callers when exp is within 5 minutes, and persists the rotation", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const store = createMemoryCredentialStore(record({ accessToken: tokenExpiringIn(4, "old") }));
    const source = createRefreshingTokenSource({ store, exchange, now });
    const tokens = await Promise.all(Array.from({ length: 20 }, () => source.getAccessToken()));
    expect(credentials).toEqual(["refresh-old"]);
    expect(new Set(tokens)).toEqual(new Set([fresh("new").accessToken]));
    const stored = await store.load();
    expect(stored).toMatchObject({
      accessToken: fresh("new").accessToken,
      refreshToken: "refresh-new",
      source: "login",
      email: "a@example.com",
      userId: "user_new",
    });
    await source.getAccessToken();
    expect(credentials).toHaveLength(1);
  });

  it("honours a configurable skew", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const store = createMemoryCredentialStore(record({ accessToken: tokenExpiringIn(8, "old") }));
    await createRefreshingTokenSource({ store, exchange, now, refreshSkewMs: 10 * 60_000 }).getAccessToken();
    expect(credentials).toHaveLength(1);
  });

  it("refreshes API-key logins with the API key", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const stored = record({ source: "api-key", apiKey: "key_abcdefghijkl", accessToken: tokenExpiringIn(1, "old") });
    const store = createMemoryCredentialStore(stored);
    await createRefreshingTokenSource({ store, exchange, now }).getAccessToken();
    expect(credentials).toEqual(["key_abcdefghijkl"]);
    expect((await store.load())?.apiKey).toBe("key_abcdefghijkl");
  });

  it("forces exactly one refresh for 20 concurrent unauthenticated callers", async () => {
    const { exchange, credentials } = controlledExchange((_c, call) => fresh(`n${call}`));
    const store = createMemoryCredentialStore(record());
    const source = createRefreshingTokenSource({ store, exchange, now });
    const rejected = await source.getAccessToken();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => source.refreshAfterUnauthenticated(rejected)));
    expect(credentials).toHaveLength(1);
    expect(new Set(tokens)).toEqual(new Set([fresh("n1").accessToken]));
    // A late caller holding the old token gets the already refreshed one, without another refresh.
    await expect(source.refreshAfterUnauthenticated(rejected)).resolves.toBe(fresh("n1").accessToken);
    expect(credentials).toHaveLength(1);
    // The new token being rejected too triggers a second refresh, with the rotated refresh token.
    await expect(source.refreshAfterUnauthenticated(fresh("n1").accessToken)).resolves.toBe(fresh("n2").accessToken);
    expect(credentials).toEqual(["refresh-old", "refresh-n1"]);
  });

  it("fails a rejected refresh with a login hint and no token in the message, then retries on the next call", async () => {
    const rejection = new ProxyError("unauthenticated", "HTTP 401");
    const { exchange, credentials } = controlledExchange((_c, call) => (call === 1 ? rejection : fresh("new")));
    const stored = record({ accessToken: tokenExpiringIn(2, "old") });
    const source = createRefreshingTokenSource({ store: createMemoryCredentialStore(stored), exchange, now });
    const error = (await source.getAccessToken().catch((e: unknown) => e)) as ProxyError;
    expect(error).toBeInstanceOf(ProxyError);
    expect(error.code).toBe("unauthenticated");
    expect(error.message).toContain("run `cursor-bridge login` again");
    expect(error.message).not.toContain(stored.accessToken);
    expect(error.message).not.toContain(stored.refreshToken);
    await expect(source.getAccessToken()).resolves.toBe(fresh("new").accessToken);
    expect(credentials).toHaveLength(2);
  });

  it("keeps a still-valid token on a transient failure; an expired one fails as unavailable, not as a login", async () => {
    const outage = new ProxyError("backend_unavailable", "down.");
    const { exchange } = controlledExchange(() => outage);
    const soon = record({ accessToken: tokenExpiringIn(2, "soon") });
    const valid = createRefreshingTokenSource({ store: createMemoryCredentialStore(soon), exchange, now });
    await expect(valid.getAccessToken()).resolves.toBe(soon.accessToken);
    await expect(valid.refreshAfterUnauthenticated(soon.accessToken)).rejects.toMatchObject({
      code: "backend_unavailable",
      retryable: true,
    });
    const expired = record({ accessToken: tokenExpiringIn(-1, "gone") });
    const store = createMemoryCredentialStore(expired);
    const source = createRefreshingTokenSource({ store, exchange, now });
    const error = (await source.getAccessToken().catch((caught: unknown) => caught)) as ProxyError;
    expect(error).toMatchObject({ code: "backend_unavailable", status: 503, retryable: true });
    expect(error.message).toContain("down.");
    expect(error.message).not.toContain("cursor-bridge login");
    // The login stays: the next call tries again.
    expect(await store.load()).toBeDefined();
  });

  it("asks for a new login only when Cursor refuses the renewal", async () => {
    const refusal = new ProxyError("unauthenticated", "rejected", { detail: "credentials_rejected" });
    const { exchange } = controlledExchange(() => refusal);
    const expired = record({ accessToken: tokenExpiringIn(-1, "gone") });
    const source = createRefreshingTokenSource({ store: createMemoryCredentialStore(expired), exchange, now });
    const error = (await source.getAccessToken().catch((caught: unknown) => caught)) as ProxyError;
    expect(error).toMatchObject({ code: "unauthenticated", detail: "refresh_failed", retryable: false });
    expect(error.message).toBe("Cursor refused to renew the session; run `cursor-bridge login` again.");
  });

  it("asks for a new login when Cursor answers the renewal with any other 4xx (OAuth's 400 invalid_grant)", async () => {
    const answers = [
      new ProxyError("backend_protocol", "Refreshing the Cursor login failed: Cursor returned unexpected HTTP 400."),
      new ProxyError("backend_protocol", "Refreshing the Cursor login failed: the answer had no access token."),
      new ProxyError("invalid_request", "refused"),
    ];
    for (const answer of answers) {
      const { exchange } = controlledExchange(() => answer);
      // Expired, and still valid: a refused renewal is no transient failure to ride out on the current token.
      for (const minutes of [-1, 2]) {
        const stored = record({ accessToken: tokenExpiringIn(minutes, "gone") });
        const store = createMemoryCredentialStore(stored);
        const source = createRefreshingTokenSource({ store, exchange, now });
        const error = (await source.getAccessToken().catch((caught: unknown) => caught)) as ProxyError;
        expect(error).toMatchObject({ code: "unauthenticated", detail: "refresh_failed", retryable: false });
        expect(error.message).toBe("Cursor refused to renew the session; run `cursor-bridge login` again.");
        expect(error.cause).toBe(answer);
      }
    }
  });

  it.each([
    ["backend_unavailable", 503],
    ["timeout", 504],
    ["rate_limited", 429],
  ] as const)("keeps the login on %s, a retryable %i that says to retry shortly", async (code, status) => {
    const { exchange, credentials } = controlledExchange((_c, call) =>
      call === 1 ? new ProxyError(code, "Cursor did not answer.") : fresh("new"),
    );
    const store = createMemoryCredentialStore(record({ accessToken: tokenExpiringIn(-1, "gone") }));
    const source = createRefreshingTokenSource({ store, exchange, now });
    const error = (await source.getAccessToken().catch((caught: unknown) => caught)) as ProxyError;
    expect(error).toMatchObject({ code, status, retryable: true });
    expect(error.message).toContain("the login is kept, retry shortly");
    expect(error.message).not.toContain("cursor-bridge login");
    await expect(source.getAccessToken()).resolves.toBe(fresh("new").accessToken);
    expect(credentials).toHaveLength(2);
  });

  it("adopts newer tokens another process stored instead of refreshing", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const store = createMemoryCredentialStore(record());
    const source = createRefreshingTokenSource({ store, exchange, now });
    const rejected = await source.getAccessToken();
    await store.save({ ...record(), accessToken: fresh("other").accessToken, refreshToken: "refresh-other" });
    await expect(source.refreshAfterUnauthenticated(rejected)).resolves.toBe(fresh("other").accessToken);
    expect(credentials).toHaveLength(0);
  });

  it("reports not logged in", async () => {
    const source = createRefreshingTokenSource({
      store: createMemoryCredentialStore(),
      exchange: async () => fresh("x"),
    });
    await expect(source.getAccessToken()).rejects.toMatchObject({ code: "unauthenticated", detail: "not_logged_in" });
  });

  it("lets one caller abort without canceling the shared refresh", async () => {
    const { exchange, credentials } = controlledExchange(() => fresh("new"));
    const store = createMemoryCredentialStore(record({ accessToken: tokenExpiringIn(1, "old") }));
    const source = createRefreshingTokenSource({ store, exchange, now });
    const controller = new AbortController();
    const aborted = source.getAccessToken(controller.signal);
    const patient = source.getAccessToken();
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: "canceled" });
    await expect(patient).resolves.toBe(fresh("new").accessToken);
    expect(credentials).toHaveLength(1);
  });

  it("still returns refreshed tokens when persisting them fails", async () => {
    const { exchange } = controlledExchange(() => fresh("new"));
    const inner = createMemoryCredentialStore(record({ accessToken: tokenExpiringIn(1, "old") }));
    const store: CredentialStore = {
      location: "broken",
      load: () => inner.load(),
      save: async (_input: CredentialsInput) => {
        throw new ProxyError("internal", "disk full");
      },
      clear: () => inner.clear(),
    };
    const source = createRefreshingTokenSource({ store, exchange, now });
    await expect(source.getAccessToken()).resolves.toBe(fresh("new").accessToken);
    await expect(source.currentCredentials()).resolves.toMatchObject({ refreshToken: "refresh-new" });
  });
});

describe("createStaticTokenSource", () => {
  it("returns the token and refuses to refresh", async () => {
    const token = tokenExpiringIn(30, "env");
    const source = createStaticTokenSource(token, { now });
    await expect(source.getAccessToken()).resolves.toBe(token);
    const error = (await source.refreshAfterUnauthenticated(token).catch((e: unknown) => e)) as ProxyError;
    expect(error.code).toBe("unauthenticated");
    expect(error.message).toContain("CURSOR_ACCESS_TOKEN");
    expect(error.message).not.toContain(token);
  });

  it("fails clearly once the token has expired", async () => {
    const source = createStaticTokenSource(tokenExpiringIn(-5, "env"), { now, origin: "--token" });
    await expect(source.getAccessToken()).rejects.toMatchObject({ code: "unauthenticated", detail: "token_expired" });
  });
});
