/**
 * `serve` prints its listening line before it has loaded the API (serve.ts). Requests sent at that instant are held,
 * then answered by the API exactly as later ones are: the emulator's models, a chat completion, /health (200 only
 * from the API itself), and every refusal (foreign Host or Origin, missing API key, oversized body) still applies.
 * In-process here; test/cli/bin.test.ts does the same against a real process.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
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

interface Answer {
  status: number;
  body: string;
}

function call(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method: options.method ?? "GET", headers: options.headers, agent: false },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Starts a bridge; `early` runs at the listening line, before the API has loaded. */
async function startWithEarly<T>(
  argv: string[],
  early: (url: string) => T,
): Promise<{ bridge: RunningBridge; early: T; out: string }> {
  const harness = await createCliHarness();
  open.push({ harness });
  let out = "";
  const io: CliIo = { out: (text) => (out += text), err: () => {}, isTty: false, env: harness.env };
  let sent: { value: T } | undefined;
  const { bridge } = await startBridge(io, ["--port", "0", "--log-level", "silent", ...argv], undefined, (url) => {
    // The banner is out and the API has not loaded: nothing has been imported or started past the bind.
    expect(out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    sent = { value: early(url) };
  });
  open.push({ bridge });
  if (sent === undefined) throw new Error("onListening did not run");
  return { bridge, early: sent.value, out };
}

const chat = (content: string) => JSON.stringify({ model: "auto", messages: [{ role: "user", content }] });

describe("requests sent the instant serve prints its listening line", () => {
  it("are answered by the API: the emulator's models, a chat completion and /health", async () => {
    const { early } = await startWithEarly([], (url) => ({
      models: call(url, "/v1/models"),
      chat: call(url, "/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: chat("sent early"),
      }),
      health: call(url, "/health"),
    }));
    const models = await early.models;
    expect(models.status).toBe(200);
    const list = JSON.parse(models.body) as { data: Array<{ id: string; owned_by: string }> };
    expect(list.data.length).toBeGreaterThan(0);
    expect(new Set(list.data.map((m) => m.owned_by))).toEqual(new Set(["cursor-emulator"]));
    const reply = await early.chat;
    expect(reply.status).toBe(200);
    expect(
      (JSON.parse(reply.body) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    ).toBe("You said: sent early");
    const health = await early.health;
    expect(health.status).toBe(200);
    // The API's own answer (the hold never answers): it names the upstream the banner named.
    expect(JSON.parse(health.body)).toMatchObject({ status: "ok", upstream: "emulator", emulator: true });
  });

  it("still refuses a foreign Host or Origin, a missing API key and an oversized body", async () => {
    const key = "early-key-0123456789";
    const { early } = await startWithEarly(["--max-body-bytes", "1000", "--max-image-bytes", "1000"], (url) => ({
      host: call(url, "/v1/models", { headers: { host: "evil.example" } }),
      origin: call(url, "/v1/models", { headers: { origin: "http://evil.example" } }),
      big: call(url, "/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: chat("x".repeat(5_000)),
      }),
    }));
    const host = await early.host;
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body)).toMatchObject({ error: { code: "host_not_allowed" } });
    const origin = await early.origin;
    expect(origin.status).toBe(403);
    expect((await early.big).status).toBe(413);

    const keyed = await startWithEarly(["--api-key", key], (url) => ({
      without: call(url, "/v1/models"),
      with: call(url, "/v1/models", { headers: { authorization: `Bearer ${key}` } }),
    }));
    expect((await keyed.early.without).status).toBe(401);
    expect((await keyed.early.with).status).toBe(200);
  });
});

describe("a start that fails after the listening line", () => {
  it("answers the held requests 503, closes the port and rejects with the reason", async () => {
    const harness = await createCliHarness();
    open.push({ harness });
    const io: CliIo = { out: () => {}, err: () => {}, isTty: false, env: harness.env };
    let early: Promise<Answer> | undefined;
    let url = "";
    // The data directory itself is fine (it is checked before the line), but the emulator's part of it is a file: the
    // stores, opened after the line, fail.
    const dataDir = join(harness.home, "data");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "emulator"), "");
    const started = startBridge(
      io,
      ["--port", "0", "--log-level", "silent", "--data-dir", dataDir],
      undefined,
      (at) => {
        url = at;
        early = call(at, "/v1/models");
      },
    );
    await expect(started).rejects.toThrow();
    const answer = await early;
    expect(answer?.status).toBe(503);
    expect(JSON.parse(answer?.body ?? "")).toMatchObject({
      error: {
        type: "server_error",
        code: "backend_unavailable",
        message: expect.stringMatching(/^cursor-bridge could not start: /),
      },
    });
    await expect(call(url, "/health")).rejects.toThrow(/ECONNREFUSED/);
  });
});
