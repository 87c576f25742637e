/**
 * A running server notices `logout`: `/health` says `logged_in: false` (the status page too) and the log says what to
 * do, instead of claiming a login that is gone until the next restart.
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

describe("serve after logout", () => {
  it("turns logged_in false and says to restart", async () => {
    expect(await loggedIn()).toBe(true);
    const logout = await harness.run(["logout"]);
    expect(logout.code).toBe(0);
    await expect.poll(loggedIn, { timeout: 5_000, interval: 200 }).toBe(false);
    expect(log).toContain("The stored Cursor login was removed");
    expect(log).toContain("restart it");
  });
});
