/**
 * `cursor-bridge serve` through the real CLI entry (flags, env, upstream choice, banner, help), against the emulator.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, captureIo, createCliHarness } from "./harness.js";

const open: Array<{ bridge?: RunningBridge; harness?: CliHarness }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) {
    await item.bridge?.close();
    await item.harness?.close();
  }
});

describe("cursor-bridge serve", () => {
  it("serves the embedded emulator without credentials and says so loudly", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const { io, out, err } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "info"]);
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("emulator");
    expect(out.join("")).toMatch(/UPSTREAM: CURSOR EMULATOR/);
    // Points to what every install has (the package ships no docs/).
    expect(out.join("")).toContain("Answers are scripted (`cursor-bridge emulator --help`).");
    expect(out.join("")).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    const client = new OpenAI({ baseURL: `${bridge.server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: "ping" }],
    });
    expect(reply.choices[0]?.message.content).toBe("You said: ping");
    const health = (await (await fetch(`${bridge.server.url}/health`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ upstream: "emulator", logged_in: false });
    expect(err.join("")).toMatch(/POST \/v1\/chat\/completions 200/);
  });

  it("uses Cursor (here: the emulator posing as Cursor) when credentials exist", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    harness.emulator.addApiKey("cur_test_key_123456", { email: "dev@example.com" });
    const login = await harness.run(["login", "--api-key"], { env: { CURSOR_API_KEY: "cur_test_key_123456" } });
    expect(login.code).toBe(0);
    const { io, out } = captureIo(harness.env);
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("cursor");
    expect(out.join("")).toMatch(/Upstream: Cursor at http:\/\/127\.0\.0\.1:\d+ as dev@example.com/);
    expect(out.join("")).not.toMatch(/EMULATOR/);
    const models = (await (await fetch(`${bridge.server.url}/v1/models`)).json()) as {
      data: Array<{ owned_by: string }>;
    };
    expect(new Set(models.data.map((m) => m.owned_by))).toEqual(new Set(["cursor"]));
    const client = new OpenAI({ baseURL: `${bridge.server.url}/v1`, apiKey: "x", maxRetries: 0 });
    const reply = await client.chat.completions.create({
      model: "gpt-5.2",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(reply.choices[0]?.message.content).toBe("You said: hi");
    expect(out.join("")).not.toContain("cur_test_key_123456");
  });

  it("forces the emulator with --upstream emulator and refuses --upstream cursor without credentials", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const forced = captureIo(harness.env);
    const { bridge } = await startBridge(forced.io, ["--port", "0", "--upstream", "emulator", "--log-level", "silent"]);
    open.push({ bridge });
    expect(bridge.upstream.kind).toBe("emulator");
    const refused = await harness.run(["serve", "--upstream", "cursor", "--port", "0"]);
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/cursor-bridge login/);
  });

  it("refuses a non-loopback host without an API key, from flags and from the environment", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const flag = await harness.run(["serve", "--host", "0.0.0.0"]);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/API key/);
    const env = await harness.run(["serve"], { env: { CURSOR_BRIDGE_HOST: "0.0.0.0" } });
    expect(env.code).toBe(2);
  });

  it("refuses any Host name without an API key, and a short key where the bridge is exposed", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const anyHost = await harness.run(["serve", "--allowed-hosts", "*"]);
    expect(anyHost.code).toBe(2);
    expect(anyHost.err).toMatch(/DNS rebinding/);
    const fromEnv = await harness.run(["serve"], { env: { CURSOR_BRIDGE_ALLOWED_HOSTS: "gateway.lan,*" } });
    expect(fromEnv.code).toBe(2);
    const short = await harness.run(["serve", "--host", "0.0.0.0", "--api-key", "short-key"]);
    expect(short.code).toBe(2);
    expect(short.err).toMatch(/at least 16/);
  });

  it("states one rule for keys in the banner: virtual keys, once they exist, with or without an API key", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const created = await harness.run(["keys", "create", "--name", "alice"]);
    expect(created.code, created.err).toBe(0);
    for (const [env, rule] of [
      [{}, "Keys: every API request needs a virtual key (`cursor-bridge keys list`)."],
      [
        { CURSOR_BRIDGE_API_KEY: "env-key-abcdef123" },
        "Keys: every API request needs a virtual key (`cursor-bridge keys list`) or the configured API key.",
      ],
    ] as const) {
      const { io, out } = captureIo({ ...harness.env, ...env });
      const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent"]);
      try {
        const text = out.join("");
        expect(text).toContain(rule);
        expect(text).not.toMatch(/No API key required|Clients must send the configured API key/);
        expect((await fetch(`${bridge.server.url}/v1/models`)).status).toBe(401);
      } finally {
        // One serve per data directory: the next start needs this one gone.
        await bridge.close();
      }
    }
  });

  it("reads the port and API key from the environment and rejects invalid settings by name", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const { io, out } = captureIo({ ...harness.env, CURSOR_BRIDGE_API_KEY: "env-key-abcdef123" });
    const { bridge } = await startBridge(io, ["--log-level", "silent"]);
    open.push({ bridge });
    expect(out.join("")).toMatch(/Clients must send the configured API key/);
    expect((await fetch(`${bridge.server.url}/v1/models`)).status).toBe(401);
    const ok = await fetch(`${bridge.server.url}/v1/models`, {
      headers: { authorization: "Bearer env-key-abcdef123" },
    });
    expect(ok.status).toBe(200);
    const bad = await harness.run(["serve", "--port", "not-a-port"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/port/);
  });

  it("documents every setting in --help", async () => {
    const { io, out } = captureIo({});
    expect(await main(["serve", "--help"], io)).toBe(0);
    const help = out.join("");
    for (const flag of [
      "--host",
      "--port",
      "--api-key",
      "--upstream",
      "--transport",
      "--reasoning-output",
      "--cors-origins",
    ]) {
      expect(help).toContain(flag);
    }
    expect(help).toContain("CURSOR_BRIDGE_PORT");
    expect(help).toContain("npm start -- [options]");
  });
});
