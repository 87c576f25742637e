/**
 * A running server notices `logout`: `/health` says `logged_in: false` (the status page too), the next request fails
 * as not logged in, the log says what to do, and a new login is used from the next request on without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, createCliHarness, issueTokens, writeStoredCredentials } from "./harness.js";

let harness: CliHarness;
let bridge: RunningBridge;
let log = "";

beforeAll(async () => {
  harness = await createCliHarness();
  writeStoredCredentials(harness, { ...issueTokens(harness, { email: "logout@example.com" }) });
  const io: CliIo = { out: () => {}, err: (text) => (log += text), isTty: false, env: harness.env };
  bridge = (await startBridge(io, ["--port", "0", "--upstream", "cursor", "--log-level", "info"])).bridge;
});
afterAll(async () => {
  await bridge?.close();
  await harness?.close();
});

async function loggedIn(): Promise<unknown> {
  const response = await fetch(`${bridge.server.url}/health`);
  return ((await response.json()) as { logged_in?: unknown }).logged_in;
}

async function chat(): Promise<{ status: number; message: string }> {
  const response = await fetch(`${bridge.server.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: body.error?.message ?? "" };
}

describe("serve after logout", () => {
  it("turns logged_in false, fails the next request as not logged in, and serves a new login without a restart", async () => {
    expect(await loggedIn()).toBe(true);
    expect((await chat()).status).toBe(200);
    const logout = await harness.run(["logout"]);
    expect(logout.code).toBe(0);
    await expect.poll(loggedIn, { timeout: 5_000, interval: 200 }).toBe(false);
    expect(log).toContain("The stored Cursor login was removed");
    expect(log).toContain("the next request uses the new login (no restart needed)");
    const refused = await chat();
    expect(refused.status).toBe(401);
    expect(refused.message).toContain("No Cursor credentials found");
    // Cursor was never asked: no claim that it rejected the token.
    expect(log).not.toContain("Cursor rejected the access token");
    writeStoredCredentials(harness, { ...issueTokens(harness, { email: "again@example.com" }) });
    await expect.poll(loggedIn, { timeout: 5_000, interval: 200 }).toBe(true);
    expect(log).toContain("A Cursor login is stored again; the next request uses it.");
    expect((await chat()).status).toBe(200);
  });
});
