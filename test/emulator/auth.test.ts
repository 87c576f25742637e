/**
 * The plain-HTTP auth routes (docs/protocol.md §3): `GET /auth/poll` (404 while pending), the local
 * `/loginDeepControl` page, `POST /auth/exchange_user_api_key` for API keys and refresh tokens; tokens are HS256 JWTs.
 */
import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("refreshes with a refresh token; expired, unknown or missing bearers are 401", async () => {
    const { refreshToken } = emulator.issueTokens({ userId: "user_refresh" });
    const refreshed = await exchange(refreshToken);
    expect(refreshed.status).toBe(200);
    const body = (await refreshed.json()) as { accessToken: string };
    expect(readJwtClaims(body.accessToken)?.sub).toBe("auth0|user_refresh");
    expect((await exchange(emulator.issueTokens({ expiresInSeconds: -1 }).accessToken)).status).toBe(401);
    expect((await exchange("nope")).status).toBe(401);
    expect((await exchange(undefined)).status).toBe(401);
  });

  it("issued access tokens carry exp = now + ttl", async () => {
    const { accessToken } = emulator.issueTokens();
    const exp = readJwtClaims(accessToken)?.exp ?? 0;
    expect(Math.abs(exp - (Date.now() / 1000 + 120))).toBeLessThan(5);
  });
});

it("unknown plain-HTTP paths are 404", async () => {
  expect((await fetch(`${emulator.url}/nope`)).status).toBe(404);
});
