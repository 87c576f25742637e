/**
 * The browser-facing settings through the real CLI: `--allowed-hosts` / `--allowed-origins` (and their environment
 * variables) open the server up deliberately; without them a foreign Host or Origin is refused.
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, createCliHarness } from "./harness.js";

const open: Array<{ bridge?: RunningBridge; harness?: CliHarness }> = [];
afterEach(async () => {
  for (const item of open.splice(0)) {
    await item.bridge?.close();
    await item.harness?.close();
  }
});

function get(port: number, headers: Record<string, string>): Promise<{ status: number; cors: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/v1/models", headers }, (res) => {
      res.resume();
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          cors: res.headers["access-control-allow-origin"] as string | undefined,
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

async function serve(argv: string[], env: Record<string, string> = {}): Promise<RunningBridge> {
  const harness = await createCliHarness();
  open.push({ harness });
  const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env: { ...harness.env, ...env } };
  const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent", ...argv]);
  open.push({ bridge });
  return bridge;
}

describe("serve --allowed-hosts / --allowed-origins", () => {
  it("refuses foreign hosts and origins by default", async () => {
    const { server } = await serve([]);
    expect((await get(server.port, { host: "my-box.lan" })).status).toBe(403);
    expect((await get(server.port, { host: "127.0.0.1", origin: "http://localhost:3000" })).status).toBe(403);
    expect((await get(server.port, { host: `127.0.0.1:${server.port}` })).status).toBe(200);
  });

  it("serves the hosts and origins given by flags, with CORS for the origin", async () => {
    const { server } = await serve([
      "--allowed-hosts",
      "my-box.lan,other.lan",
      "--allowed-origins",
      "http://localhost:3000",
    ]);
    expect((await get(server.port, { host: "my-box.lan:8765" })).status).toBe(200);
    expect((await get(server.port, { host: "other.lan" })).status).toBe(200);
    const browser = await get(server.port, { host: "127.0.0.1", origin: "http://localhost:3000" });
    expect(browser).toEqual({ status: 200, cors: "http://localhost:3000" });
    expect((await get(server.port, { host: "127.0.0.1", origin: "https://evil.example" })).status).toBe(403);
  });

  it("reads the environment variables", async () => {
    const { server } = await serve([], {
      CURSOR_BRIDGE_ALLOWED_HOSTS: "env-box.lan",
      CURSOR_BRIDGE_ALLOWED_ORIGINS: "https://app.example",
    });
    expect((await get(server.port, { host: "env-box.lan" })).status).toBe(200);
    expect((await get(server.port, { host: "127.0.0.1", origin: "https://app.example" })).status).toBe(200);
  });
});

describe("serve's own keys in its log", () => {
  it("a client sending the API key as its model, or a key pasted into a path, never puts a key in the log", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const lines: string[] = [];
    const apiKey = "the-operators-key-0123456789";
    const adminKey = "the-admins-key-9876543210";
    const env = { ...harness.env, CURSOR_BRIDGE_API_KEY: apiKey, CURSOR_BRIDGE_ADMIN_KEY: adminKey };
    const io: CliIo = { out: () => {}, err: (text) => lines.push(text), isTty: false, env };
    const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "info", "--upstream", "emulator"]);
    open.push({ bridge });
    const url = `http://127.0.0.1:${bridge.server.port}`;
    const authorization = `Bearer ${apiKey}`;
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ model: apiKey, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(404);
    expect((await fetch(`${url}/v1/models/${adminKey}`, { headers: { authorization } })).status).toBe(404);
    expect((await fetch(`${url}/${apiKey}`)).status).toBe(404);
    const log = lines.join("");
    // The three requests were logged, keys replaced.
    expect(log).toContain("asked=[redacted]");
    expect(log).toContain("GET /v1/models/[redacted] 404");
    expect(log).not.toContain(apiKey);
    expect(log).not.toContain(adminKey);
  });
});
