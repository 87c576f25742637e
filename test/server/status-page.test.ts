/**
 * The status page over a real socket: `GET /` and `GET /status.json` follow the API's Host and Origin rules, need the
 * local API key when one is set (Basic-auth password included, which is what a browser sends), record the API
 * requests (surface, client, model, route, tokens, status) but not the page's own polling, list parked turns with
 * their age, and never let a client-supplied value break out of the page's markup. The rendering in a real browser
 * is test/server/status-page-browser.test.ts.
 */
import { request as httpRequest } from "node:http";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/server/app.js";
import type { StatusSnapshot } from "../../src/server/status-page.js";
import type { PlanUsage } from "../../src/surfaces/kit/deps.js";
import { silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "../support/app-options.js";
import { type Stack, type StackOptions, startStack } from "../support/stack.js";

const stacks: Stack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

async function stack(options: StackOptions = {}): Promise<Stack> {
  const started = await startStack(options);
  stacks.push(started);
  return started;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with exactly these headers (node:http lets the test set Host). */
function get(stackUnderTest: Stack, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(stackUnderTest.server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: Number(url.port), path, method: "GET", headers: { host: url.host, ...headers } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (part: string) => (body += part));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function snapshot(s: Stack, headers: Record<string, string> = {}): Promise<StatusSnapshot> {
  const answer = await get(s, "/status.json", headers);
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as StatusSnapshot;
}

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "bash", parameters: { type: "object", properties: { command: { type: "string" } } } },
  },
];

describe("status page", () => {
  it("serves a self-contained HTML page with a strict CSP and the snapshot embedded", async () => {
    const s = await stack();
    const page = await get(s, "/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    const csp = String(page.headers["content-security-policy"]);
    const nonce = csp.match(/script-src 'nonce-([^']+)'/)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.headers["cache-control"]).toBe("no-store");
    // Every script and style carries the nonce; nothing is loaded from elsewhere.
    expect(page.body.match(/<script nonce=/g)).toHaveLength(1);
    expect(page.body).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
    expect(page.body).toContain('<script id="initial" type="application/json">{"version":"test"');
    expect((await get(s, "/", { origin: "https://evil.example" })).status).toBe(403);
  });

  it("follows the API's Host and Origin rules", async () => {
    const s = await stack();
    for (const path of ["/", "/status.json"]) {
      const rebound = await get(s, path, { host: "attacker.example" });
      expect(rebound.status).toBe(403);
      expect(rebound.body).toContain("host_not_allowed");
      const foreign = await get(s, path, { origin: "https://evil.example" });
      expect(foreign.status).toBe(403);
      expect(foreign.body).toContain("origin_not_allowed");
      expect((await get(s, path, { "sec-fetch-site": "cross-site" })).status).toBe(403);
      // What a browser sends for the page itself and for its own fetch of /status.json.
      expect((await get(s, path, { "sec-fetch-site": "none" })).status).toBe(200);
      expect((await get(s, path, { "sec-fetch-site": "same-origin" })).status).toBe(200);
      const own = new URL(s.server.url).origin;
      expect((await get(s, path, { origin: own, "sec-fetch-site": "same-origin" })).status).toBe(200);
    }
  });

  it("needs the local API key when one is set, as Bearer or as the Basic-auth password, and never shows it", async () => {
    const key = "status-page-key-81d2";
    const s = await stack({ app: { apiKey: key } });
    for (const path of ["/", "/status.json"]) {
      const missing = await get(s, path);
      expect(missing.status).toBe(401);
      expect(missing.headers["www-authenticate"]).toBe('Basic realm="cursor-bridge status", charset="UTF-8"');
      expect(missing.body).not.toContain(key);
      expect(JSON.parse(missing.body)).toMatchObject({
        error: { code: "invalid_api_key", type: "authentication_error" },
      });
      const wrong = `Basic ${Buffer.from("me:not-the-key").toString("base64")}`;
      expect((await get(s, path, { authorization: wrong })).status).toBe(401);
      const basic = await get(s, path, { authorization: `Basic ${Buffer.from(`me:${key}`).toString("base64")}` });
      expect(basic.status).toBe(200);
      expect(basic.body).not.toContain(key);
      expect((await get(s, path, { authorization: `Bearer ${key}` })).status).toBe(200);
      expect((await get(s, path, { "x-api-key": key })).status).toBe(200);
    }
  });

  it("records API requests with surface, client, model, route, tokens and status, and lists parked turns", async () => {
    const s = await stack();
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    await client.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "first" }] });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'Run it [[emu:tool bash {"command":"ls"}]]' },
    ];
    const call = await client.chat.completions.create({ model: "composer-1", messages, tools });
    const toolCall = call.choices[0]?.message.tool_calls?.[0];
    expect(toolCall).toBeDefined();

    let status = await snapshot(s);
    expect(status.parked).toHaveLength(1);
    expect(status.parked[0]).toMatchObject({ model: "composer-1", pendingToolCalls: 1 });
    expect(status.parked[0]?.ageMs).toBeGreaterThanOrEqual(0);
    expect(status.upstream).toEqual({ kind: "emulator", url: null, loggedIn: false, account: null });
    expect(status.models.map((m) => m.id)).toContain("composer-1");

    await client.chat.completions.create({
      model: "composer-1",
      messages: [
        ...messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [toolCall as OpenAI.Chat.Completions.ChatCompletionMessageToolCall],
        },
        { role: "tool", tool_call_id: toolCall?.id ?? "", content: "a.txt" },
      ],
      tools,
    });
    await fetch(`${s.baseURL}/models/no-such-model`, { headers: { "user-agent": "curl/8.5.0 (x86_64)" } });
    await get(s, "/");
    await get(s, "/health");

    status = await snapshot(s);
    expect(status.parked).toEqual([]);
    const rows = status.requests.map((r) => [r.surface, r.model, r.route, r.parked, r.status]);
    expect(rows).toEqual([
      ["models", undefined, undefined, undefined, 404],
      ["chat", "composer-1", "resumed", false, 200],
      ["chat", "composer-1", "new", true, 200],
      // The model that served `auto` (routed_model), as the response names it.
      ["chat", "composer-1.5", "new", false, 200],
    ]);
    expect(status.requests[0]?.client).toBe("curl/8.5.0");
    expect(status.requests[1]?.client).toMatch(/^OpenAI\//);
    expect(status.requests[3]?.tokens).toBeGreaterThan(0);
    expect(status.requests[3]?.ttftMs).toBeGreaterThanOrEqual(0);
    expect(status.requests[3]?.totalMs).toBeGreaterThanOrEqual(status.requests[3]?.ttftMs ?? 0);
  });

  it("shows an unknown model as `unknown`, and keeps a client-supplied user agent from breaking out of the page", async () => {
    const s = await stack();
    const evil = "</script><img/src=x/onerror=alert(1)><!--";
    await fetch(`${s.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": evil },
      body: JSON.stringify({ model: evil, messages: [{ role: "user", content: "hi" }] }),
    });
    const status = await snapshot(s);
    expect(status.requests[0]?.model).toBe("unknown");
    expect(status.requests[0]?.client).toBe(evil);
    const page = await get(s, "/");
    expect(page.body).not.toContain("</script><img");
    expect(page.body).not.toContain("<!--");
    expect(page.body).toContain("\\u003c/script>\\u003cimg/src=x/onerror=alert(1)>\\u003c!--");
  });

  it("reports plan usage from the upstream (asked at most once a minute), and why when it cannot", async () => {
    const s = await stack();
    expect((await snapshot(s)).usage).toEqual({ available: false, reason: "not reported by this upstream" });

    let now = 1_000_000;
    let calls = 0;
    let fail = false;
    const usage: PlanUsage = {
      usedFraction: 0.25,
      usedCents: 500,
      limitCents: 2000,
      remainingCents: 1500,
      cycleStart: "2026-11-01T00:00:00.000Z",
      cycleEnd: "2026-12-01T00:00:00.000Z",
      message: "",
    };
    const app = createApp({
      engine: s.engine,
      logger: silentLogger,
      options: testAppOptions({
        maxBodyBytes: 1024,
        reasoningOutput: "none",
        upstream: "cursor",
        loggedIn: true,
        version: "t",
      }),
      now: () => now,
      newId: () => "id",
      status: {
        account: "ada@example.com",
        upstreamUrl: "https://user:hunter2@api2.cursor.sh/",
        usage: async () => {
          calls++;
          if (fail) throw new Error("Cursor said no");
          return usage;
        },
      },
    });
    const read = async () => (await (await app.request("/status.json")).json()) as StatusSnapshot;
    const first = await read();
    expect(first.usage).toEqual({ available: true, ...usage });
    expect(first.upstream).toEqual({
      kind: "cursor",
      url: "https://api2.cursor.sh",
      loggedIn: true,
      account: "ada@example.com",
    });
    fail = true;
    now += 59_000;
    expect((await read()).usage).toMatchObject({ available: true });
    expect(calls).toBe(1);
    now += 2_000;
    expect((await read()).usage).toEqual({ available: false, reason: "Cursor said no" });
    expect(calls).toBe(2);
  });
});
