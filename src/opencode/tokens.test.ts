/**
 * The plugin's refresh code against the emulator's real `/oauth/token` (browser logins) and
 * `/auth/exchange_user_api_key` (API keys): OpenCode's auth store is
 * played by an in-memory record that `write` replaces (what `client.auth.set` does).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CURSOR_OAUTH_CLIENT_ID } from "../auth/exchange.js";
import { type Emulator, startEmulator } from "../emulator/index.js";
import { ProxyError } from "../util/errors.js";
import { jwtExpiresAtMs } from "../util/jwt.js";
import { type AuthAccess, createOpenCodeTokenSource } from "./tokens.js";
import type { OpenCodeAuth } from "./types.js";

const API_KEY = "plugin-test-key";

/** OpenCode's auth store for provider cursor, plus a record of every write. */
function fakeAuthStore(initial: OpenCodeAuth | undefined): AuthAccess & { writes: OpenCodeAuth[] } {
  let current = initial;
  const writes: OpenCodeAuth[] = [];
  return {
    writes,
    read: async () => current,
    write: async (auth) => {
      writes.push(auth);
      current = auth;
    },
  };
}

/** fetch that counts the token exchanges it forwards. */
function countingFetch() {
  const calls: string[] = [];
  return {
    calls,
    fetch: (input: string, init: RequestInit) => {
      calls.push(new URL(input).pathname);
      return fetch(input, init);
    },
  };
}

describe("plugin token source (OpenCode's auth store, emulator exchange)", () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKeys: [API_KEY] });
  });
  afterAll(async () => {
    await emulator?.close();
  });

  it("refreshes an expired access token once for concurrent callers through /oauth/token and writes it back first", async () => {
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    const store = fakeAuthStore({ type: "oauth", refresh: old.refreshToken, access: old.accessToken, expires: 0 });
    const counter = countingFetch();
    const source = createOpenCodeTokenSource({ auth: store, apiUrl: emulator.url, fetch: counter.fetch });

    const tokens = await Promise.all([source.getAccessToken(), source.getAccessToken(), source.getAccessToken()]);

    expect(counter.calls).toEqual(["/oauth/token"]);
    expect(new Set(tokens).size).toBe(1);
    const [fresh] = tokens;
    expect(fresh).not.toBe(old.accessToken);
    expect(jwtExpiresAtMs(fresh ?? "")).toBeGreaterThan(Date.now());
    // Written back before it was handed out; Cursor's OAuth refresh does not rotate the refresh token, which stays.
    expect(store.writes).toHaveLength(1);
    const written = store.writes[0];
    expect(written?.type).toBe("oauth");
    if (written?.type !== "oauth") return;
    expect(written.access).toBe(fresh);
    expect(written.refresh).toBe(old.refreshToken);
    expect(written.expires).toBe(jwtExpiresAtMs(fresh ?? ""));
    // The kept refresh token still refreshes.
    const again = await fetch(`${emulator.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        grant_type: "refresh_token",
        client_id: CURSOR_OAUTH_CLIENT_ID,
        refresh_token: written.refresh,
      }),
    });
    expect(await again.json()).toMatchObject({ shouldLogout: false, access_token: expect.any(String) });
    // A valid token is served without another exchange.
    expect(await source.getAccessToken()).toBe(fresh);
    expect(counter.calls).toHaveLength(1);
  });

  it("refreshes after Cursor rejected the current token, once, and persists the result", async () => {
    const pair = emulator.issueTokens();
    const store = fakeAuthStore({ type: "oauth", refresh: pair.refreshToken, access: pair.accessToken, expires: 0 });
    const counter = countingFetch();
    const source = createOpenCodeTokenSource({ auth: store, apiUrl: emulator.url, fetch: counter.fetch });
    expect(await source.getAccessToken()).toBe(pair.accessToken);
    expect(counter.calls).toHaveLength(0);

    const [a, b] = await Promise.all([
      source.refreshAfterUnauthenticated(pair.accessToken),
      source.refreshAfterUnauthenticated(pair.accessToken),
    ]);
    expect(a).toBe(b);
    expect(a).not.toBe(pair.accessToken);
    expect(counter.calls).toHaveLength(1);
    expect(store.writes.map((w) => w.type === "oauth" && w.access)).toEqual([a]);
  });

  it("exchanges an API-key credential like `login --api-key` and never writes to the store", async () => {
    const store = fakeAuthStore({ type: "api", key: API_KEY });
    const counter = countingFetch();
    const source = createOpenCodeTokenSource({ auth: store, apiUrl: emulator.url, fetch: counter.fetch });
    const token = await source.getAccessToken();
    expect(jwtExpiresAtMs(token)).toBeGreaterThan(Date.now());
    expect(await source.getAccessToken()).toBe(token);
    expect(counter.calls).toEqual(["/auth/exchange_user_api_key"]);
    expect(store.writes).toEqual([]);
  });

  it("tells the user to log in through OpenCode when there is no credential or Cursor rejects it", async () => {
    const none = createOpenCodeTokenSource({ auth: fakeAuthStore(undefined), apiUrl: emulator.url });
    const missing = await none.getAccessToken().catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ProxyError);
    expect((missing as ProxyError).code).toBe("unauthenticated");
    expect((missing as ProxyError).message).toContain("opencode auth login");

    const store = fakeAuthStore({ type: "api", key: "not-a-registered-key" });
    const rejected = await createOpenCodeTokenSource({ auth: store, apiUrl: emulator.url })
      .getAccessToken()
      .catch((error: unknown) => error);
    expect((rejected as ProxyError).code).toBe("unauthenticated");
    // A wrong key is named as such, with Cursor's reason and where a current key comes from.
    expect((rejected as ProxyError).message).toMatch(
      /^Cursor rejected the API key stored for provider cursor \(.+\)\. Run `opencode auth login`, choose cursor, then "Cursor API key"/,
    );
    expect((rejected as ProxyError).message).toContain("User API Keys");
    expect((rejected as ProxyError).message).not.toContain("not-a-registered-key");
    expect(store.writes).toEqual([]);
  });

  it("starts afresh when the stored credential changes from an API key to a login", async () => {
    const store = fakeAuthStore({ type: "api", key: API_KEY });
    const source = createOpenCodeTokenSource({ auth: store, apiUrl: emulator.url });
    const fromKey = await source.getAccessToken();
    const login = emulator.issueTokens({ email: "other@example.com" });
    await store.write({ type: "oauth", refresh: login.refreshToken, access: login.accessToken, expires: 0 });
    const fromLogin = await source.getAccessToken();
    expect(fromLogin).toBe(login.accessToken);
    expect(fromLogin).not.toBe(fromKey);
  });
});
