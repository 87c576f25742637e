/**
 * A new `cursor-bridge login` while a real `serve` runs (bin/cursor-bridge.js on the harness's emulator): the next
 * request runs on the new login, and the status page (`/status.json`) names the new login's identity, not the one
 * read at the start.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningOrigin } from "../support/processes.js";
import { type CliHarness, createCliHarness } from "./harness.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

let harness: CliHarness;
let serve: ChildProcess | undefined;
let stderr = "";
let origin = "";

/** `cursor-bridge login --api-key` with a key the emulator knows as `email`. */
async function loginAs(key: string, email: string): Promise<void> {
  harness.emulator.addApiKey(key, { email, userId: `user-${email}` });
  harness.secrets.add(key);
  const login = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: key } });
  expect(login.code, login.err).toBe(0);
}

beforeAll(async () => {
  harness = await createCliHarness();
  await loginAs("cur_first_login_key", "first@example.com");
  serve = spawn(
    process.execPath,
    [BIN, "serve", "--port", "0", "--upstream", "cursor", "--cursor-api-url", harness.emulator.url],
    {
      env: { ...harness.env, CURSOR_BRIDGE_LOG_LEVEL: "info", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  serve.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  origin = await listeningOrigin(serve, "serve", () => stderr);
}, 120_000);

afterAll(async () => {
  if (serve !== undefined && serve.exitCode === null) {
    const exited = new Promise((resolve) => serve?.once("exit", resolve));
    serve.kill("SIGTERM");
    await exited;
  }
  await harness?.close();
});

async function statusAccount(): Promise<unknown> {
  const response = await fetch(`${origin}/status.json`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { upstream: { account: unknown } }).upstream.account;
}

async function chat(): Promise<number> {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hello" }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("serve after a new login", () => {
  it("names the new login on /status.json and runs the next request on it, without a restart", async () => {
    expect(await statusAccount()).toBe("first@example.com");
    expect(await chat()).toBe(200);
    await loginAs("cur_second_login_key", "second@example.com");
    // Read through the store at most once a second: polled, with room for a loaded machine.
    await expect.poll(statusAccount, { timeout: 20_000, interval: 250 }).toBe("second@example.com");
    expect(await chat()).toBe(200);
    // And it stays so (the identity is not read from the start's credentials again).
    expect(await statusAccount()).toBe("second@example.com");
    harness.expectNoSecrets(stderr);
  }, 120_000);
});
