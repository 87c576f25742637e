/**
 * A browser login's life against the emulator, with the file credential store and the real token source, protocol
 * client and agent client (cursor-protocol-addendum-3.md X8): an expired access token is refreshed through
 * `POST /oauth/token` (never the exchange endpoint, which refuses browser-login tokens), the refresh token is kept;
 * Cursor's `shouldLogout` removes the login, and a refusal the OAuth way (400 `invalid_grant`) asks for a new one; a `logout` while the server runs sticks: the next request is "not
 * logged in" and no later refresh writes the removed credentials back.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRefreshingTokenSource } from "../../src/auth/token-source.js";
import { createAgentClient } from "../../src/backend/agent-client.js";
import type { BackendEvent, TokenSource } from "../../src/backend/types.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { createFileCredentialStore } from "../../src/stores/file/credential-store.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import type { CredentialStore } from "../../src/stores/types.js";
import { ProxyError } from "../../src/util/errors.js";
import { silentLogger } from "../../src/util/logger.js";

let emulator: Emulator;
let dir: string;
const apis: CursorApi[] = [];
beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), "cursor-bridge-login-"));
});
afterEach(() => {
  for (const api of apis.splice(0)) api.close();
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

function fileStore(): CredentialStore {
  return createFileCredentialStore({ configDir: join(dir, randomUUID()) });
}

/** One turn through the real protocol and agent client; resolves to the reply text. */
async function turn(tokenSource: TokenSource, text = "hello"): Promise<string> {
  const api = createCursorApi({
    agentUrl: emulator.url,
    apiUrl: emulator.url,
    getAccessToken: (signal) => tokenSource.getAccessToken(signal),
    clientVersion: "cli-2026.10.01-e373342",
    transport: "http2",
    logger: silentLogger,
  });
  apis.push(api);
  const client = createAgentClient({
    api,
    tokenSource,
    conversationStore: createMemoryConversationStore(),
    logger: silentLogger,
  });
  const events: BackendEvent[] = [];
  const started = client.startTurn({
    model: "composer-1",
    conversationId: randomUUID(),
    newConversation: true,
    messages: [{ role: "user", content: text }],
    tools: [],
  });
  for await (const event of started.stream()) events.push(event);
  return events.map((e) => (e.type === "text-delta" ? e.text : "")).join("");
}

describe("browser login refresh", () => {
  it("refreshes an expired access token through /oauth/token, keeps the refresh token, and the turn succeeds", async () => {
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    await store.save({ accessToken: old.accessToken, refreshToken: old.refreshToken, source: "login" });
    const before = emulator.stats();
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url });
    expect(await turn(source)).toBe("You said: hello");
    const after = emulator.stats();
    expect(after.oauthTokenCalls - before.oauthTokenCalls).toBe(1);
    expect(after.exchangeCalls - before.exchangeCalls).toBe(0);
    const stored = await store.load();
    expect(stored?.accessToken).not.toBe(old.accessToken);
    expect(stored?.refreshToken).toBe(old.refreshToken);
  });

  it("concurrent callers share one refresh", async () => {
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    await store.save({ accessToken: old.accessToken, refreshToken: old.refreshToken, source: "login" });
    const before = emulator.stats().oauthTokenCalls;
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url });
    const tokens = await Promise.all(Array.from({ length: 10 }, () => source.getAccessToken()));
    expect(new Set(tokens).size).toBe(1);
    expect(emulator.stats().oauthTokenCalls - before).toBe(1);
  });

  it("an API-key login keeps refreshing through the exchange endpoint", async () => {
    emulator.addApiKey("lifecycle-key");
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    await store.save({ ...old, source: "api-key", apiKey: "lifecycle-key" });
    const before = emulator.stats();
    await createRefreshingTokenSource({ store, apiUrl: emulator.url }).getAccessToken();
    expect(emulator.stats().exchangeCalls - before.exchangeCalls).toBe(1);
    expect(emulator.stats().oauthTokenCalls - before.oauthTokenCalls).toBe(0);
  });

  it("Cursor's shouldLogout removes the login and says so", async () => {
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    emulator.revokeRefreshToken(old.refreshToken);
    await store.save({ accessToken: old.accessToken, refreshToken: old.refreshToken, source: "login" });
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url });
    const error = (await source.getAccessToken().catch((e: unknown) => e)) as ProxyError;
    expect(error).toBeInstanceOf(ProxyError);
    expect(error.code).toBe("unauthenticated");
    expect(error.message).toContain("shouldLogout");
    expect(error.message).toContain("cursor-bridge login");
    expect(await store.load()).toBeUndefined();
  });

  it("a refresh token refused the OAuth way (400 invalid_grant) asks for a new login, every time", async () => {
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    emulator.revokeRefreshToken(old.refreshToken, "invalid_grant");
    await store.save({ accessToken: old.accessToken, refreshToken: old.refreshToken, source: "login" });
    const before = emulator.stats().oauthTokenCalls;
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url });
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = (await source.getAccessToken().catch((e: unknown) => e)) as ProxyError;
      expect(error).toBeInstanceOf(ProxyError);
      expect(error).toMatchObject({ code: "unauthenticated", status: 401, retryable: false, detail: "refresh_failed" });
      expect(error.message).toBe("Cursor refused to renew the session; run `cursor-bridge login` again.");
      expect(error.message).not.toContain("retry shortly");
      expect((error.cause as ProxyError).message).toContain("invalid_grant");
    }
    // Each request asked Cursor again (a new login stored meanwhile would be used), and the login was not removed.
    expect(emulator.stats().oauthTokenCalls - before).toBe(2);
    expect(await store.load()).toMatchObject({ refreshToken: old.refreshToken });
  });
});

describe("logout while serving", () => {
  it("the next request is 'not logged in' and no refresh writes the removed login back", async () => {
    const store = fileStore();
    const pair = emulator.issueTokens({ expiresInSeconds: 3600 });
    await store.save({ ...pair, source: "login" });
    // A clock the test moves: refreshes become due as traffic goes on.
    let now = Date.now();
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url, now: () => now });
    expect(await turn(source)).toBe("You said: hello");

    expect(await store.clear()).toBe(true); // what `cursor-bridge logout` does
    for (let minute = 0; minute < 120; minute += 1) {
      // 60 s of traffic per step of a simulated two hours: every token is due for a refresh after the first hour.
      now += 60_000;
      const error = (await source.getAccessToken().catch((e: unknown) => e)) as ProxyError;
      expect(error).toBeInstanceOf(ProxyError);
      expect(error.detail).toBe("not_logged_in");
      await source.refreshAfterUnauthenticated(pair.accessToken).catch(() => undefined);
      expect(existsSync(store.location)).toBe(false);
    }
    await expect(turn(source)).rejects.toMatchObject({ code: "unauthenticated" });
    expect(existsSync(store.location)).toBe(false);
  });

  it("a refresh racing the logout does not write the login back", async () => {
    const store = fileStore();
    const old = emulator.issueTokens({ expiresInSeconds: -60 });
    await store.save({ accessToken: old.accessToken, refreshToken: old.refreshToken, source: "login" });
    const slowFetch = async (input: string, init: RequestInit) => {
      const answer = await fetch(input, init);
      await store.clear(); // the user logs out while Cursor answers the refresh
      return answer;
    };
    const source = createRefreshingTokenSource({ store, apiUrl: emulator.url, fetch: slowFetch });
    await expect(source.getAccessToken()).rejects.toMatchObject({ detail: "not_logged_in" });
    expect(existsSync(store.location)).toBe(false);
  });
});
