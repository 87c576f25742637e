/**
 * The team gateway as `serve` runs it (the real CLI entry, the emulator upstream):
 * - a key sent as a request's `model` (a misconfiguration that happens), with an OpenAI-style `sk-…` key and a JWT
 *   beside it, appears nowhere: not in /status.json, /metrics, the status page, the server's log or the audit log
 *   (also when pasted into an admin path); /status.json without the admin key is 401 once keys exist;
 * - `keys update` (CLI) and `PATCH /admin/keys/NAME` change a live key's rpm: the next request sees the new limit,
 *   on the file store and across two instances sharing Redis; `GET /admin/keys/NAME` shows it and the key's spend;
 *   each change is audited;
 * - a spent budget answers `key_budget_exceeded`, and the errors metric's `code` label says so; a model outside the
 *   key's allow-list is refused for that, before the budget is looked at.
 * Without redis-server the Redis case is skipped with a printed reason, unless CI=true (then it fails).
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/cli/io.js";
import { type RunningBridge, startBridge } from "../../src/cli/serve.js";
import { type CliHarness, createCliHarness } from "../cli/harness.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";

const ADMIN = "admin-key-for-the-team-test-0123";
const open: RunningBridge[] = [];
let harness: CliHarness;
beforeAll(async () => {
  harness = await createCliHarness();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((bridge) => bridge.close()));
});
afterAll(async () => {
  await harness?.close();
});

/** Starts `serve` with the admin key; its log lines (level info) are collected in `log`. */
async function serve(storeArgs: string[], log: string[] = []): Promise<string> {
  const io: CliIo = {
    out: (text) => log.push(text),
    err: (text) => log.push(text),
    isTty: false,
    env: harness.env,
  };
  const { bridge } = await startBridge(io, [
    "--port",
    "0",
    "--upstream",
    "emulator",
    "--log-level",
    "info",
    "--admin-key",
    ADMIN,
    ...storeArgs,
  ]);
  open.push(bridge);
  return bridge.server.url;
}

const asAdmin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
const admin = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}/admin${path}`, { ...init, headers: asAdmin });
const chat = (url: string, key: string, model = "auto", extra: Record<string, unknown> = {}) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], ...extra }),
  });

async function createKey(url: string, body: Record<string, unknown>): Promise<string> {
  const response = await admin(url, "/keys", { method: "POST", body: JSON.stringify(body) });
  expect(response.status).toBe(201);
  const key = String(((await response.json()) as { key: string }).key);
  harness.secrets.add(key);
  return key;
}

/** Polls until `request` answers `status` (bounded). */
async function until(status: number, request: () => Promise<Response>, limitMs = 10_000): Promise<Response> {
  const started = Date.now();
  for (;;) {
    const response = await request();
    if (response.status === status) return response;
    await response.body?.cancel();
    if (Date.now() - started > limitMs) throw new Error(`still ${response.status} after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("no secret in a label, page or audit line", () => {
  it("a key sent as `model` appears nowhere in status.json, /metrics, the page, the log or the audit", async () => {
    const log: string[] = [];
    const url = await serve(["--data-dir", join(harness.home, "secrets")], log);
    const key = await createKey(url, { name: "ivy" });
    const openai = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789";
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    const secrets = [key, openai, jwt];
    for (const model of secrets) {
      const response = await chat(url, key, model);
      expect(response.status).toBe(404);
      const body = await response.text();
      for (const secret of secrets) expect(body).not.toContain(secret);
    }
    // A key pasted into an admin path is not written to the audit either.
    expect((await admin(url, `/keys/${key}`)).status).toBe(404);
    expect((await admin(url, `/keys/${openai}`)).status).toBe(404);
    // A key name shaped like key material is refused.
    const shaped = await admin(url, "/keys", {
      method: "POST",
      body: JSON.stringify({ name: "sk-abcdefghij1234567890" }),
    });
    expect(shaped.status).toBe(400);
    expect(((await shaped.json()) as { error: { message: string } }).error.message).toContain("key material");

    const anonymous = await fetch(`${url}/status.json`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { message: string } }).error.message).toContain("admin key");
    const status = await (await fetch(`${url}/status.json`, { headers: asAdmin })).text();
    const models = (JSON.parse(status) as { requests: Array<{ model?: string }> }).requests.map((r) => r.model);
    expect(models).toContain("unknown");
    const page = await (await fetch(`${url}/`, { headers: asAdmin })).text();
    const metrics = await (await fetch(`${url}/metrics`, { headers: asAdmin })).text();
    const audit = await (await admin(url, "/audit?limit=1000")).text();
    const texts = { status, page, metrics, audit, log: log.join("") };
    for (const [where, text] of Object.entries(texts)) {
      expect(text.length, where).toBeGreaterThan(0);
      for (const secret of secrets) expect(text.includes(secret), `${where} holds ${secret.slice(0, 8)}…`).toBe(false);
    }
    expect(metrics).toMatch(/cursor_bridge_requests_total\{[^}]*model="unknown"/);
    expect(audit).toContain("/admin/keys/cbk-[redacted]");
  });
});

describe("editing keys in place", () => {
  it("keys update (CLI) and PATCH change a live key's rpm on the file store; GET shows it with its spend", async () => {
    const dataDir = join(harness.home, "update-file");
    const url = await serve(["--data-dir", dataDir]);
    const key = await createKey(url, { name: "jude", rpm: 1 });
    expect((await chat(url, key)).status).toBe(200);
    expect((await chat(url, key)).status).toBe(429);
    const result = await harness.run(["keys", "update", "jude", "--rpm", "3", "--data-dir", dataDir, "--json"]);
    expect(result.code, result.err).toBe(0);
    expect((JSON.parse(result.out) as { limits: { rpm: number } }).limits.rpm).toBe(3);
    // The running server sees the change within its poll of the key store.
    await (await until(200, () => chat(url, key))).text();
    const patched = await admin(url, "/keys/jude", {
      method: "PATCH",
      body: JSON.stringify({ rpm: 1, budget: "5/day" }),
    });
    expect(patched.status).toBe(200);
    await until(429, () => chat(url, key));
    const info = (await (await admin(url, "/keys/jude")).json()) as {
      limits: { rpm: number; budget: { usd: number } };
      updatedAt: string | null;
      usage: { requests: number; spendUsd: number; period: string } | null;
    };
    expect(info.limits).toMatchObject({ rpm: 1, budget: { usd: 5, period: "day" } });
    expect(info.updatedAt).not.toBeNull();
    expect(info.usage?.period).toBe("day");
    // Refusals of the admin API name its fields, never a CLI flag.
    const bad = await admin(url, "/keys/jude", { method: "PATCH", body: JSON.stringify({ max_parallel: "many" }) });
    expect(bad.status).toBe(400);
    const message = ((await bad.json()) as { error: { message: string; param: string } }).error;
    expect(message.message).toContain("`max_parallel`");
    expect(message.message).not.toContain("--");
    expect(message.param).toBe("max_parallel");
    const audit = (await (await admin(url, "/audit?limit=100")).json()) as {
      data: Array<{ action: string; actor: string; detail?: { changes?: Record<string, unknown> } }>;
    };
    const updates = audit.data.filter((entry) => entry.action === "key.update");
    expect(updates.map((entry) => entry.actor.split(":")[0])).toEqual(["cli", "admin-api"]);
    expect(updates[1]?.detail?.changes).toEqual({ rpm: 1, budget: { usd: 5, period: "day" } });
  });

  it("a spent budget is key_budget_exceeded in the body and the metrics' code label; the allow-list comes first", async () => {
    const url = await serve(["--data-dir", join(harness.home, "budget")]);
    // A worst case (4,096 output tokens at the highest price) far above the budget: refused before it runs.
    const key = await createKey(url, { name: "kit", budget: "0.000001/day", models: ["composer-*"] });
    const refused = await chat(url, key, "composer-1.5");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("key_budget_exceeded");
    expect(error.message).toMatch(/\(in \d+ (h|min|s)( \d+ (min|s))?\)/);
    // A model the key may not use is refused for that, not for the budget.
    const forbidden = await chat(url, key, "claude-4-sonnet");
    expect(forbidden.status).toBe(403);
    await forbidden.text();
    const metrics = await (await fetch(`${url}/metrics`, { headers: asAdmin })).text();
    expect(metrics).toMatch(/cursor_bridge_errors_total\{[^}]*code="key_budget_exceeded"[^}]*\} 1/);
    expect(metrics).not.toMatch(/code="quota_exceeded"/);
  });

  it("after keys exist, a wrong key hears that this server gives each person a key and whom to ask", async () => {
    const url = await serve(["--data-dir", join(harness.home, "wrong-key")]);
    await createKey(url, { name: "lee" });
    const response = await chat(url, "local");
    expect(response.status).toBe(401);
    const { message } = ((await response.json()) as { error: { message: string } }).error;
    expect(message).toContain("gives each person a key");
    expect(message).toContain("Ask the person who runs this server");
    expect(message).not.toMatch(/`(cursor-bridge|npm run)/);
  });
});

const skipRedis = missingBinaries("redis-server", "redis-cli");
describe.skipIf(skipRedis !== undefined)("editing keys across two instances sharing Redis", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => redis?.close());

  it("an rpm changed through one instance holds on the other at its next request", async () => {
    const store = ["--store", redis.url, "--cluster-secret", "a-cluster-secret-of-some-length"];
    const [a, b] = [await serve(store), await serve(store)];
    const key = await createKey(a, { name: "max", rpm: 1 });
    // The other instance knows the keys once it refuses a request without one (its poll of the store).
    await (await until(401, () => fetch(`${b}/v1/models`))).text();
    expect((await chat(b, key)).status).toBe(200);
    // The shared window already holds the one request allowed.
    expect((await chat(a, key)).status).toBe(429);
    const patched = await admin(a, "/keys/max", { method: "PATCH", body: JSON.stringify({ rpm: 4 }) });
    expect(patched.status).toBe(200);
    const next = await until(200, () => chat(b, key));
    expect(next.headers.get("x-ratelimit-limit-requests")).toBe("4");
    await next.text();
    const info = (await (await admin(b, "/keys/max")).json()) as {
      limits: { rpm: number };
      usage: { requests: number };
    };
    expect(info.limits.rpm).toBe(4);
    expect(info.usage.requests).toBe(2);
  });
});
