/**
 * Seeded fuzzer over every endpoint of the real stack (bridge over a socket, emulator upstream). Each case is a
 * request built from valid shapes and then broken: fields removed or replaced by random JSON, unknown keys, weird
 * strings, deep nesting, truncated or non-UTF-8 bodies, wrong content types, methods, hosts, origins and request ids.
 * Every answer must be well-formed: no 500 ever, a 5xx only when Cursor (the emulator) caused it, an OpenAI error
 * body on every error, a complete SSE stream or one error frame on a 200 stream, and the server still healthy at the
 * end. `FUZZ_SEED` and `FUZZ_CASES` reproduce or widen a run; the seed and the counts are printed.
 */
import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
const CONCURRENCY = 12;
const MAX_BODY = 256 * 1024;

type Rand = () => number;

/** mulberry32: small, fast, good enough for test input. */
function prng(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WEIRD_STRINGS = [
  "",
  " ",
  "\u0000",
  "line\nbreak",
  "tab\tand\r\nCRLF",
  "emoji 😀👍🏽",
  "\ud800 lone surrogate",
  "RTL \u202e override",
  "__proto__",
  "constructor",
  "null",
  "1e400",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "%00%0a",
  "\u2028\u2029",
  "a".repeat(300),
];

class Gen {
  constructor(readonly r: Rand) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  string(): string {
    if (this.chance(0.4)) return this.pick(WEIRD_STRINGS);
    if (this.chance(0.02)) return "x".repeat(10_000 + this.int(50_000));
    const length = this.int(20);
    let out = "";
    for (let i = 0; i < length; i++)
      out += String.fromCharCode(this.chance(0.9) ? 32 + this.int(95) : this.int(0xffff));
    return out.replaceAll("[[emu:", "[[emu ");
  }
  nested(depth: number): unknown {
    let value: unknown = this.chance(0.5) ? [] : {};
    for (let i = 0; i < depth; i++) value = this.chance(0.5) ? [value] : { k: value };
    return value;
  }
  json(depth = 0): unknown {
    const roll = this.int(depth > 3 ? 6 : 9);
    if (roll === 0) return null;
    if (roll === 1) return this.chance(0.5);
    if (roll === 2) return this.pick([0, -1, 1.5, 2 ** 53, -(2 ** 31), 1e308, Number.MIN_VALUE]);
    if (roll <= 5) return this.string();
    if (roll === 6) return Array.from({ length: this.int(4) }, () => this.json(depth + 1));
    if (roll === 7 && this.chance(0.1)) return this.nested(this.pick([30, 70, 200, 1000]));
    const out: Record<string, unknown> = {};
    for (let i = 0; i < this.int(4); i++) out[this.string()] = this.json(depth + 1);
    return out;
  }
}

/** Valid request shapes the mutations start from. */
function baseChat(g: Gen): Record<string, unknown> {
  const text = (prefix: string) => `${prefix} ${g.int(1_000_000)}`;
  const tools = [
    {
      type: "function",
      function: {
        name: "lookup",
        description: "Look something up",
        parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
      },
    },
  ];
  const shapes: Array<() => Record<string, unknown>> = [
    () => ({ model: "auto", messages: [{ role: "user", content: text("hello") }] }),
    () => ({
      model: g.pick(["auto", "default", "claude-4.5-sonnet", "claude-4.5-sonnet-thinking"]),
      messages: [
        { role: g.pick(["system", "developer"]), content: "Be brief." },
        { role: "user", content: [{ type: "text", text: text("parts") }] },
      ],
    }),
    () => ({
      model: "auto",
      tools,
      tool_choice: g.pick(["auto", "none", "required"]),
      messages: [{ role: "user", content: text("tools") }],
    }),
    () => {
      const id = `call_${g.int(1000)}`;
      return {
        model: "auto",
        tools,
        messages: [
          { role: "user", content: text("earlier") },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id, type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } }],
          },
          { role: "tool", tool_call_id: g.chance(0.8) ? id : `call_${g.int(1000)}`, content: "result" },
        ],
      };
    },
    () => ({
      model: "auto",
      messages: [
        { role: "user", content: text("first") },
        { role: "assistant", content: "You said: first" },
        { role: "user", content: text("second") },
      ],
    }),
    () => ({
      model: "auto",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }],
    }),
  ];
  const body = g.pick(shapes)();
  if (g.chance(0.5)) body.stream = true;
  if (g.chance(0.2)) body.stream_options = { include_usage: g.chance(0.5) };
  if (g.chance(0.2)) body[g.pick(["temperature", "top_p", "seed", "max_tokens", "n", "user", "logprobs"])] = g.json();
  return body;
}

/** Every container node of a value with its parent, so a mutation can replace or delete it. */
function nodes(root: unknown): Array<[Record<string, unknown> | unknown[], string | number]> {
  const out: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && out.length < 500) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        out.push([value, i]);
        stack.push(item);
      });
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        out.push([value as Record<string, unknown>, key]);
        stack.push(item);
      }
    }
  }
  return out;
}

function mutate(g: Gen, body: Record<string, unknown>): void {
  for (let i = g.int(4); i > 0; i--) {
    const all = nodes(body);
    if (all.length === 0) return;
    const [parent, key] = g.pick(all);
    const op = g.int(4);
    if (op === 0) {
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key as string];
    } else if (op === 1 || op === 2) {
      (parent as Record<string | number, unknown>)[key] = g.json();
    } else {
      body[g.string()] = g.json();
    }
  }
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  label: string;
}

function chatBody(g: Gen): { body: Buffer; label: string } {
  const roll = g.int(100);
  if (roll < 3) return { body: Buffer.alloc(0), label: "empty" };
  if (roll < 6) return { body: Buffer.from(Array.from({ length: g.int(200) }, () => g.int(256))), label: "bytes" };
  if (roll < 8) return { body: Buffer.from(JSON.stringify(g.json())), label: "random-json" };
  if (roll < 9) return { body: Buffer.alloc(MAX_BODY + 10, 0x20), label: "too-large" };
  const value = baseChat(g);
  const label = roll < 22 ? "valid" : "mutated";
  if (label === "mutated") mutate(g, value);
  const text = JSON.stringify(value);
  if (roll >= 90 && roll < 94) return { body: Buffer.from(text.slice(0, g.int(text.length))), label: "truncated" };
  return { body: Buffer.from(text), label };
}

function fuzzRequest(g: Gen, port: number): FuzzRequest {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
  if (g.chance(0.1)) headers["x-request-id"] = g.pick(["ok-id_1=", "has space", "a".repeat(300), "é", ""]);
  if (g.chance(0.02)) headers.host = g.pick(["evil.example", "localhost", "[::1]:1", "0.0.0.0:1"]);
  if (g.chance(0.03)) headers.origin = g.pick(["https://evil.example", `http://127.0.0.1:${port}`, "null"]);
  if (g.chance(0.03)) headers.authorization = g.pick(["Bearer x", "Basic Zm9vOmJhcg==", "Bearer"]);
  const endpoint = g.int(100);
  if (endpoint < 75) {
    const { body, label } = chatBody(g);
    headers["content-type"] = g.chance(0.93)
      ? g.pick(["application/json", "application/json; charset=utf-8"])
      : g.pick([
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/xml",
        ]);
    return { method: "POST", path: "/v1/chat/completions", headers, body, label: `chat:${label}` };
  }
  if (endpoint < 83) return { method: "GET", path: "/v1/models", headers, body: undefined, label: "models" };
  if (endpoint < 88) {
    const random =
      g
        .string()
        .slice(0, 200)
        .replace(/[\ud800-\udfff]/g, "?") || "x";
    const id = encodeURIComponent(g.pick(["auto", "default", "claude-4.5-sonnet", random]));
    return { method: "GET", path: `/v1/models/${id}`, headers, body: undefined, label: "model" };
  }
  if (endpoint < 92) return { method: "GET", path: "/health", headers, body: undefined, label: "health" };
  const method = g.pick(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]);
  const path = g.pick([
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/",
    "/v1",
    "/v2/x",
    "/%2e%2e/etc",
  ]);
  const body = method === "GET" || method === "HEAD" ? undefined : Buffer.from("{}");
  if (body) headers["content-type"] = "application/json";
  return { method, path, headers, body, label: `other:${method}` };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(agent: Agent, port: number, req: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers["content-length"] = req.body.length;
    const outgoing = request({ agent, host: "127.0.0.1", port, method: req.method, path: req.path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    outgoing.setTimeout(60_000, () => outgoing.destroy(new Error("no answer within 60 s")));
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

const UPSTREAM_CODES = new Set(["upstream_unavailable", "upstream_error", "upstream_timeout", "blob_not_found"]);

function checkErrorBody(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "error body is not JSON";
  }
  const error = (parsed as { error?: Record<string, unknown> }).error;
  if (typeof error !== "object" || error === null) return "no error object";
  if (typeof error.message !== "string" || error.message === "") return "no message";
  if (typeof error.type !== "string") return "no type";
  if (!(error.param === null || typeof error.param === "string")) return "bad param";
  if (!(error.code === null || typeof error.code === "string")) return "bad code";
  if (/\n\s+at /.test(error.message)) return "stack trace in message";
  return undefined;
}

/** Undefined when the answer is well-formed; otherwise what is wrong with it. */
function judge(req: FuzzRequest, answer: Answer, upstream: { count: number }): string | undefined {
  const { status, headers, body } = answer;
  const type = String(headers["content-type"] ?? "");
  if (status === 500) return "500";
  if (status > 500) {
    const code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? "";
    if (!UPSTREAM_CODES.has(code)) return `${status} not caused upstream (${code})`;
    upstream.count += 1;
  }
  if (status !== 408 && typeof headers["x-request-id"] !== "string") return "no x-request-id";
  if (req.method === "HEAD" || req.method === "OPTIONS" || status === 204) return undefined;
  if (status >= 400) {
    if (!type.includes("application/json")) return `error with content-type ${type}`;
    return checkErrorBody(body);
  }
  if (type.includes("text/event-stream")) {
    if (body.endsWith("data: [DONE]\n\n")) return undefined;
    const last = body.trim().split("\n\n").at(-1) ?? "";
    if (!last.startsWith("data: ")) return "stream ended without [DONE] or an error frame";
    const problem = checkErrorBody(last.slice("data: ".length));
    if (problem !== undefined) return `stream: ${problem}`;
    const code = (JSON.parse(last.slice("data: ".length)) as { error: { code?: string } }).error.code ?? "";
    if (!UPSTREAM_CODES.has(code)) return `stream error not caused upstream (${code})`;
    upstream.count += 1;
    return undefined;
  }
  try {
    JSON.parse(body);
  } catch {
    return "200 body is not JSON";
  }
  return undefined;
}

describe("seeded fuzzer over every endpoint", () => {
  let stack: Stack;
  let agent: Agent;
  beforeAll(async () => {
    stack = await startStack({ app: { maxBodyBytes: MAX_BODY }, stallTimeoutMs: 5_000 });
    agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  });
  afterAll(async () => {
    agent?.destroy();
    await stack?.close();
  });

  it(`answers ${CASES} fuzzed requests (seed ${SEED}) with well-formed responses and no 500`, async () => {
    const g = new Gen(prng(SEED));
    const port = stack.server.port;
    const requests = Array.from({ length: CASES }, () => fuzzRequest(g, port));
    const byLabel = new Map<string, number>();
    const byStatus = new Map<number, number>();
    const failures: string[] = [];
    const upstream = { count: 0 };
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        const req = requests[index] as FuzzRequest;
        let problem: string | undefined;
        let status = 0;
        try {
          const answer = await send(agent, port, req);
          status = answer.status;
          problem = judge(req, answer, upstream);
          if (problem !== undefined) problem += ` — body ${answer.body.slice(0, 300)}`;
        } catch (error) {
          problem = `no answer: ${(error as Error).message}`;
        }
        byLabel.set(req.label, (byLabel.get(req.label) ?? 0) + 1);
        byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
        if (problem !== undefined && failures.length < 20) {
          failures.push(`case ${index} ${req.method} ${req.path} [${req.label}] → ${status}: ${problem}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const health = await send(agent, port, {
      method: "GET",
      path: "/health",
      headers: { host: `127.0.0.1:${port}` },
      body: undefined,
      label: "health",
    });
    const statuses = [...byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`);
    const labels = [...byLabel.entries()].sort().map(([l, n]) => `${l}:${n}`);
    process.stdout.write(
      `reliability: fuzzer seed=${SEED} ran ${CASES} cases in ${seconds} s; statuses ${statuses.join(" ")}; ` +
        `upstream-caused 5xx/frames ${upstream.count}; kinds ${labels.join(" ")}; failures ${failures.length}\n`,
    );
    expect(failures).toEqual([]);
    expect(health.status).toBe(200);
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(CASES / 10);
  }, 300_000);
});
