/**
 * The plain-HTTP auth routes (docs/protocol.md §3): `GET /auth/poll` (404 while pending), the local
 * `/loginDeepControl` page, `POST /auth/exchange_user_api_key` for API keys only, `POST /oauth/token` refreshing a
 * browser login; tokens are HS256 JWTs.
 */

import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAUTH_CLIENT_ID } from "../../src/emulator/auth.js";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { base64UrlEncode, readJwtClaims } from "../../src/util/jwt.js";
import { agentClient } from "./support/raw-client.js";

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator({ accessTokenTtlSeconds: 120 });
});
afterAll(async () => {
  await emulator.close();
});

function pkce() {
  const verifier = base64UrlEncode(new Uint8Array(createHash("sha256").update(randomUUID()).digest()));
  const challenge = base64UrlEncode(new Uint8Array(createHash("sha256").update(verifier).digest()));
  return { verifier, challenge, uuid: randomUUID() };
}

const poll = (uuid: string, verifier: string) =>
  fetch(`${emulator.url}/auth/poll?uuid=${uuid}&verifier=${encodeURIComponent(verifier)}`);

describe("browser login", () => {
  it("poll is 404 while pending; the loginDeepControl page approves; poll then returns a usable token pair once", async () => {
    const { verifier, challenge, uuid } = pkce();
    expect((await poll(uuid, verifier)).status).toBe(404);
    const page = await fetch(
      `${emulator.url}/loginDeepControl?challenge=${challenge}&uuid=${uuid}&mode=login&redirectTarget=cli`,
    );
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('action="/loginDeepControl"');
    expect((await poll(uuid, verifier)).status).toBe(404);
    const approve = await fetch(`${emulator.url}/loginDeepControl`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ uuid, challenge }).toString(),
    });
    expect(approve.status).toBe(200);
    const done = await poll(uuid, verifier);
    expect(done.status).toBe(200);
    const body = (await done.json()) as { accessToken: string; refreshToken: string; authId: string; uuid: string };
    expect(body.authId).toMatch(/^auth0\|user_/);
    expect(body.uuid).toBe(uuid);
    const claims = readJwtClaims(body.accessToken);
    expect(claims?.exp).toBeGreaterThan(Date.now() / 1000);
    expect(body.accessToken.startsWith("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.")).toBe(true);
    expect((await agentClient(emulator.url, body.accessToken).getUsableModels({})).models.length).toBeGreaterThan(0);
    expect((await poll(uuid, verifier)).status).toBe(404);
  });

  it("a verifier that does not match the page's challenge is refused", async () => {
    const { challenge, uuid } = pkce();
    await fetch(`${emulator.url}/loginDeepControl?challenge=${challenge}&uuid=${uuid}&mode=login`);
    await fetch(`${emulator.url}/loginDeepControl`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ uuid, challenge }).toString(),
    });
    expect((await poll(uuid, "wrong-verifier")).status).toBe(403);
  });

  it("approveLogin is the test hook for the same flow", async () => {
    const { verifier, uuid } = pkce();
    emulator.approveLogin(uuid, { userId: "user_hook", email: "hook@example.com" });
    const body = (await (await poll(uuid, verifier)).json()) as { accessToken: string };
    expect(readJwtClaims(body.accessToken)).toMatchObject({ sub: "auth0|user_hook", email: "hook@example.com" });
  });

  it("poll without uuid or verifier is a 400", async () => {
    expect((await fetch(`${emulator.url}/auth/poll?uuid=x`)).status).toBe(400);
  });
});

describe("exchange_user_api_key", () => {
  const exchange = (bearer: string | undefined) =>
    fetch(`${emulator.url}/auth/exchange_user_api_key`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      },
      body: "{}",
    });

  it("exchanges a registered API key for a token pair", async () => {
    emulator.addApiKey("key_test_0123456789", { userId: "user_key" });
    const response = await exchange("key_test_0123456789");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { accessToken: string; refreshToken: string };
    expect(readJwtClaims(body.accessToken)?.sub).toBe("auth0|user_key");
  });

  it("takes user API keys only: a browser login's refresh or access token is 401 Invalid User API Key", async () => {
    const { refreshToken, accessToken } = emulator.issueTokens({ userId: "user_refresh" });
    for (const token of [refreshToken, accessToken, "nope"]) {
      const refused = await exchange(token);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: "Invalid User API Key" });
    }
    expect((await exchange(undefined)).status).toBe(401);
  });

  it("issued access tokens carry exp = now + ttl", async () => {
    const { accessToken } = emulator.issueTokens();
    const exp = readJwtClaims(accessToken)?.exp ?? 0;
    expect(Math.abs(exp - (Date.now() / 1000 + 120))).toBeLessThan(5);
  });
});

describe("oauth/token", () => {
  const token = (body: unknown) =>
    fetch(`${emulator.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const grant = (refreshToken: string, clientId = OAUTH_CLIENT_ID) => ({
    grant_type: "refresh_token",
    client_id: clientId,
    refresh_token: refreshToken,
  });

  it("refreshes a browser login with the refresh_token grant; the refresh token does not rotate", async () => {
    const { refreshToken } = emulator.issueTokens({ userId: "user_oauth" });
    const answer = await token(grant(refreshToken));
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body.shouldLogout).toBe(false);
    expect(body.refresh_token).toBeUndefined();
    expect(readJwtClaims(String(body.access_token))?.sub).toBe("auth0|user_oauth");
    expect((await token(grant(refreshToken))).status).toBe(200);
  });

  it("answers a revoked, unknown or access token with shouldLogout; a bad request or client is refused", async () => {
    const { refreshToken, accessToken } = emulator.issueTokens();
    emulator.revokeRefreshToken(refreshToken);
    for (const t of [refreshToken, accessToken, "nope"]) {
      expect(await (await token(grant(t))).json()).toMatchObject({ shouldLogout: true });
    }
    const live = emulator.issueTokens().refreshToken;
    expect((await token(grant(live, "another-client"))).status).toBe(401);
    expect((await token({ grant_type: "password", client_id: OAUTH_CLIENT_ID })).status).toBe(400);
    expect((await token("{not json")).status).toBe(400);
  });

  it("refuses a refresh token revoked with invalid_grant the OAuth way, and only that one", async () => {
    const { refreshToken } = emulator.issueTokens();
    const other = emulator.issueTokens().refreshToken;
    emulator.revokeRefreshToken(refreshToken, "invalid_grant");
    const answer = await token(grant(refreshToken));
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ error: "invalid_grant" });
    expect(await (await token(grant(other))).json()).toMatchObject({ shouldLogout: false });
  });
});

it("unknown plain-HTTP paths are 404", async () => {
  expect((await fetch(`${emulator.url}/nope`)).status).toBe(404);
});
