/**
 * GET /metrics (issue #29) against the emulator: every metric family after known traffic on chat completions,
 * responses and messages, streamed and not (the emulator's usage is deterministic, see usage-and-model.test.ts),
 * an error counted by its code, the parked-turn gauge, per-key spend gauges, and who may read the metrics.
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/server/app.js";
import type { AppEnv } from "../../src/surfaces/kit/access-log.js";
import type { Principal } from "../../src/surfaces/kit/principal.js";
import { silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "../support/app-options.js";
import { hasSeries, parseExposition, type Sample, sumOf } from "../support/prometheus-text.js";
import { type Stack, startStack } from "../support/stack.js";

const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";
const SERVED = "composer-1.5";
/** The emulator's counts for MESSAGE: 46 prompt tokens (40 read from the cache, 3 written), 12 output (7 reasoning). */
const USAGE = { input: 46, output: 12, cached: 40, cache_write: 3, reasoning: 7 };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack.close());

const HEADERS = { "content-type": "application/json", "anthropic-version": "2023-06-01" };

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${stack.baseURL}${path}`, { method: "POST", headers: HEADERS, body: JSON.stringify(body) });
}

async function scrape(url = stack.server.url): Promise<Sample[]> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await response.text());
}

/** The request bodies of one MESSAGE turn per surface, streamed and not. */
const TRAFFIC: [string, string, Record<string, unknown>][] = [
  ["chat", "/chat/completions", { model: "auto", messages: [{ role: "user", content: MESSAGE }] }],
  ["responses", "/responses", { model: "auto", input: MESSAGE, store: false }],
  ["messages", "/messages", { model: "auto", max_tokens: 100, messages: [{ role: "user", content: MESSAGE }] }],
];

describe("metric families after known traffic", () => {
  let samples: Sample[];
  beforeAll(async () => {
    for (const [, path, body] of TRAFFIC) {
      for (const stream of [false, true]) {
        const extra = stream && path === "/chat/completions" ? { stream_options: { include_usage: true } } : {};
        const response = await post(path, { ...body, stream, ...extra });
        expect(response.status).toBe(200);
        await response.text();
      }
    }
    const failed = await post("/chat/completions", {
      model: "auto",
      messages: [{ role: "user", content: "no more [[emu:error usage_limit]]" }],
    });
    expect(failed.status).toBe(429);
    await failed.text();
    // Parked on a tool call: the turn waits for the client's result (on another model, so MESSAGE's counts stay exact).
    const parked = await post("/chat/completions", {
      model: "composer-2",
      messages: [{ role: "user", content: `park ${randomUUID()} [[emu:tool lookup {"q":1}]]` }],
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
    });
    expect(parked.status).toBe(200);
    await parked.text();
    // The access log counts a streamed request once the server has ended its body, which may be a moment after the
    // client read it: scrape until all 8 are in (bounded).
    const deadline = Date.now() + 5_000;
    do samples = await scrape();
    while (sumOf(samples, "cursor_bridge_requests_total") < 8 && Date.now() < deadline);
  });

  it("counts requests by surface, status, model and key name (no key: empty)", () => {
    for (const [surface] of TRAFFIC) {
      expect(sumOf(samples, "cursor_bridge_requests_total", { surface, status: "200", model: SERVED, key: "" })).toBe(
        2,
      );
    }
    expect(
      sumOf(samples, "cursor_bridge_requests_total", { surface: "chat", status: "200", model: "composer-2" }),
    ).toBe(1);
    expect(sumOf(samples, "cursor_bridge_requests_total", { surface: "chat", status: "429" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_requests_total")).toBe(8);
  });

  it("counts Cursor's exact tokens by type, surface and model", () => {
    for (const [surface] of TRAFFIC) {
      for (const [type, perTurn] of Object.entries(USAGE)) {
        const labels = { surface, model: SERVED, key: "", type };
        expect(sumOf(samples, "cursor_bridge_tokens_total", labels)).toBe(2 * perTurn);
      }
    }
  });

  it("observes time to first token in seconds for every turn that produced text", () => {
    for (const [surface] of TRAFFIC) {
      const labels = { surface, model: SERVED, key: "" };
      const count = sumOf(samples, "cursor_bridge_time_to_first_token_seconds_count", labels);
      expect(count).toBe(2);
      const sum = sumOf(samples, "cursor_bridge_time_to_first_token_seconds_sum", labels);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThan(30); // seconds, not milliseconds
      expect(sumOf(samples, "cursor_bridge_time_to_first_token_seconds_bucket", { ...labels, le: "+Inf" })).toBe(2);
      expect(
        sumOf(samples, "cursor_bridge_time_to_first_token_seconds_bucket", { ...labels, le: "0.005" }),
      ).toBeLessThanOrEqual(2);
    }
  });

  it("counts upstream Runs by route", () => {
    expect(sumOf(samples, "cursor_bridge_upstream_runs_total", { route: "new" })).toBe(7);
    expect(sumOf(samples, "cursor_bridge_upstream_runs_total")).toBe(7);
  });

  it("counts errors by code", () => {
    expect(sumOf(samples, "cursor_bridge_errors_total", { surface: "chat", code: "quota_exceeded" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_errors_total")).toBe(1);
  });

  it("reports the parked turns of the engine", () => {
    expect(stack.parked.size()).toBe(1);
    expect(sumOf(samples, "cursor_bridge_parked_turns")).toBe(1);
  });

  it("includes the process metrics under the prefix", () => {
    expect(hasSeries(samples, "cursor_bridge_process_cpu_user_seconds_total")).toBe(true);
    expect(hasSeries(samples, "cursor_bridge_nodejs_heap_size_used_bytes")).toBe(true);
  });
});

/** An app on the stack's engine, served in-process with a given socket peer address and principal. */
function appWith(options: {
  adminKey?: string;
  apiKey?: string;
  principal?: Principal;
  spend?: Parameters<typeof createApp>[1];
}) {
  const app = createApp(
    {
      engine: stack.engine,
      logger: silentLogger,
      options: testAppOptions({ apiKey: options.apiKey, maxBodyBytes: 1024 * 1024 }),
      now: Date.now,
      newId: () => randomUUID(),
    },
    { adminKey: options.adminKey, ...options.spend },
  );
  const outer = new Hono<AppEnv>();
  const principal = options.principal;
  if (principal !== undefined) {
    // Stands in for the gateway's auth middleware (src/gateway/keys), which sets the principal before the doors run.
    outer.use(async (c, next) => {
      c.set("principal", principal);
      await next();
    });
  }
  outer.route("/", app);
  return (path: string, init: RequestInit = {}, peer?: string) =>
    outer.request(path, init, peer === undefined ? undefined : { incoming: { socket: { remoteAddress: peer } } });
}

describe("who may read /metrics", () => {
  it("serves loopback peers (IPv4, IPv6, mapped) without a key", async () => {
    const request = appWith({});
    for (const peer of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) {
      expect((await request("/metrics", {}, peer)).status).toBe(200);
    }
  });

  it("refuses other peers with an OpenAI-shaped 403 when no admin key is set, whatever their headers say", async () => {
    const request = appWith({});
    for (const peer of ["10.0.0.5", "::ffff:192.168.1.2", undefined]) {
      const response = await request("/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } }, peer);
      expect(response.status).toBe(403);
      const body = (await response.json()) as { error: { message: string; type: string; code: string } };
      expect(body.error.message).toContain("loopback");
      expect(body.error.message).toContain("--admin-key");
      expect(body.error.type).toBeTypeOf("string");
    }
  });

  it("with an admin key: the key is served from anywhere, none is a 401, a wrong one a 401 even on loopback", async () => {
    const adminKey = `admin-${randomUUID()}`;
    const request = appWith({ adminKey });
    const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    expect((await request("/metrics", bearer(adminKey), "10.0.0.5")).status).toBe(200);
    expect((await request("/metrics", bearer(adminKey))).status).toBe(200);
    const missing = await request("/metrics", {}, "10.0.0.5");
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toContain("admin key");
    const wrong = await request("/metrics", bearer("not-the-key"), "127.0.0.1");
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).not.toContain("login");
    expect((await request("/metrics", {}, "127.0.0.1")).status).toBe(200);
  });

  it("applies the Host guard like every other path", async () => {
    const request = appWith({});
    const response = await request("http://evil.example/metrics", { headers: { host: "evil.example" } }, "127.0.0.1");
    expect(response.status).toBe(403);
  });
});

describe("a stream that breaks after the 200", () => {
  it("counts as a 200 request and as an error by its code", async () => {
    const before = await scrape();
    const labels = { surface: "chat", code: "backend_unavailable" };
    const response = await post("/chat/completions", {
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: `drop ${randomUUID()} [[emu:tokens 5]] [[emu:drop 2]]` }],
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"error"');
    const deadline = Date.now() + 5_000;
    let after = await scrape();
    while (sumOf(after, "cursor_bridge_errors_total", labels) === sumOf(before, "cursor_bridge_errors_total", labels)) {
      if (Date.now() > deadline) break;
      after = await scrape();
    }
    expect(
      sumOf(after, "cursor_bridge_errors_total", labels) - sumOf(before, "cursor_bridge_errors_total", labels),
    ).toBe(1);
    const ok = { surface: "chat", status: "200", model: SERVED };
    expect(sumOf(after, "cursor_bridge_requests_total", ok) - sumOf(before, "cursor_bridge_requests_total", ok)).toBe(
      1,
    );
  });
});

describe("errors answered before a turn", () => {
  it("count by code on the door that answered them, with their status", async () => {
    const request = appWith({ apiKey: "local-key" });
    const chat = { model: "auto", messages: [{ role: "user", content: "hi" }] };
    const unauthenticated = await request(
      "/v1/chat/completions",
      { method: "POST", headers: HEADERS, body: JSON.stringify(chat) },
      "127.0.0.1",
    );
    expect(unauthenticated.status).toBe(401);
    const invalid = await request(
      "/v1/messages",
      { method: "POST", headers: { ...HEADERS, "x-api-key": "local-key" }, body: "{" },
      "127.0.0.1",
    );
    expect(invalid.status).toBe(400);
    const samples = parseExposition(await (await request("/metrics", {}, "127.0.0.1")).text());
    expect(sumOf(samples, "cursor_bridge_errors_total", { surface: "chat", code: "unauthenticated" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_errors_total", { surface: "messages", code: "invalid_request" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_requests_total", { surface: "chat", status: "401" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_requests_total", { surface: "messages", status: "400" })).toBe(1);
  });
});

describe("key names, never key material", () => {
  it("labels a virtual key's requests with its name only", async () => {
    const secret = `cbk-${randomUUID().replaceAll("-", "")}${randomUUID().replaceAll("-", "")}`;
    const principal: Principal = { keyId: "key_7f3a9c", keyName: "alice", limits: {}, checkModel: () => {} };
    const request = appWith({ principal });
    const response = await request(
      "/v1/chat/completions",
      {
        method: "POST",
        headers: { ...HEADERS, authorization: `Bearer ${secret}` },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: MESSAGE }] }),
      },
      "127.0.0.1",
    );
    expect(response.status).toBe(200);
    await response.text();
    const text = await (await request("/metrics", {}, "127.0.0.1")).text();
    const samples = parseExposition(text);
    expect(sumOf(samples, "cursor_bridge_requests_total", { key: "alice", model: SERVED, status: "200" })).toBe(1);
    expect(sumOf(samples, "cursor_bridge_tokens_total", { key: "alice", type: "input" })).toBe(USAGE.input);
    expect(text).not.toContain(secret);
    expect(text).not.toContain("cbk-");
    expect(text).not.toContain(principal.keyId);
  });
});

describe("spend and budget gauges", () => {
  it("are read from the key-spend source on each scrape; a key that is gone disappears", async () => {
    let keys = [
      { keyName: "alice", spendUsd: 1.25, budgetUsd: 10 },
      { keyName: "bob", spendUsd: 12.5, budgetUsd: 10 },
      { keyName: "carol", spendUsd: 0.5 },
    ];
    let calls = 0;
    const request = appWith({
      spend: {
        keySpend: {
          snapshot: async () => {
            calls++;
            return keys;
          },
        },
      },
    });
    let samples = parseExposition(await (await request("/metrics", {}, "::1")).text());
    expect(calls).toBe(1); // one snapshot per scrape, shared by the gauges
    expect(sumOf(samples, "cursor_bridge_key_spend_usd", { key: "alice" })).toBe(1.25);
    expect(sumOf(samples, "cursor_bridge_key_budget_usd", { key: "alice" })).toBe(10);
    expect(sumOf(samples, "cursor_bridge_key_budget_remaining_usd", { key: "alice" })).toBe(8.75);
    expect(sumOf(samples, "cursor_bridge_key_budget_remaining_usd", { key: "bob" })).toBe(0);
    expect(sumOf(samples, "cursor_bridge_key_spend_usd", { key: "carol" })).toBe(0.5);
    expect(samples.some((s) => s.name === "cursor_bridge_key_budget_usd" && s.labels.key === "carol")).toBe(false);
    keys = [{ keyName: "alice", spendUsd: 2, budgetUsd: 10 }];
    samples = parseExposition(await (await request("/metrics", {}, "::1")).text());
    expect(sumOf(samples, "cursor_bridge_key_spend_usd", { key: "alice" })).toBe(2);
    expect(samples.some((s) => s.labels.key === "bob")).toBe(false);
  });

  it("a failing source leaves the gauges empty and the scrape still answers", async () => {
    const request = appWith({
      spend: { keySpend: { snapshot: () => Promise.reject(new Error("store down")) } },
    });
    const response = await request("/metrics", {}, "::1");
    expect(response.status).toBe(200);
    const samples = parseExposition(await response.text());
    expect(samples.some((s) => s.name === "cursor_bridge_key_spend_usd")).toBe(false);
    expect(hasSeries(samples, "cursor_bridge_parked_turns")).toBe(true);
  });
});
