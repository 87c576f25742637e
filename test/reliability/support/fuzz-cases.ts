/**
 * Case generators of the seeded fuzzer (test/reliability/fuzz.test.ts): valid request shapes, mutations that break
 * them, and the endpoint/method/header mix.
 */
import type { HttpCase } from "./fuzz-run.js";

/** Largest body the fuzzed server accepts; one case kind sends more. */
export const MAX_BODY = 256 * 1024;

type Rand = () => number;

/** mulberry32: small, fast, good enough for test input. */
export function prng(seed: number): Rand {
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

export class Gen {
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

/** Every container node of a value with its parent (at most `limit`), so a mutation can replace or delete it. */
export function nodes(root: unknown, limit = 500): Array<[Record<string, unknown> | unknown[], string | number]> {
  const out: Array<[Record<string, unknown> | unknown[], string | number]> = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && out.length < limit) {
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

/** One case of the API fuzzer. */
export type FuzzRequest = HttpCase;

/** Valid Anthropic Messages and OpenAI Responses shapes (the other two POST surfaces). */
function baseOther(g: Gen, surface: "messages" | "responses"): Record<string, unknown> {
  const text = `hello ${g.int(1_000_000)}`;
  if (surface === "responses") {
    return g.chance(0.5)
      ? { model: "auto", input: text }
      : {
          model: "auto",
          instructions: "Be brief.",
          input: [{ role: "user", content: [{ type: "input_text", text }] }],
        };
  }
  return {
    model: g.pick(["claude-4.5-sonnet", "auto"]),
    max_tokens: 100,
    ...(g.chance(0.3) ? { system: "Be brief." } : {}),
    messages: [{ role: "user", content: g.chance(0.5) ? text : [{ type: "text", text }] }],
  };
}

type Surface = "chat" | "messages" | "count_tokens" | "responses";

function chatBody(g: Gen, surface: Surface = "chat"): { body: Buffer; label: string } {
  const roll = g.int(100);
  if (roll < 3) return { body: Buffer.alloc(0), label: "empty" };
  if (roll < 6) return { body: Buffer.from(Array.from({ length: g.int(200) }, () => g.int(256))), label: "bytes" };
  if (roll < 8) return { body: Buffer.from(JSON.stringify(g.json())), label: "random-json" };
  if (roll < 9) return { body: Buffer.alloc(MAX_BODY + 10, 0x20), label: "too-large" };
  const value = surface === "chat" ? baseChat(g) : baseOther(g, surface === "count_tokens" ? "messages" : surface);
  const label = roll < 22 ? "valid" : "mutated";
  if (label === "mutated") mutate(g, value);
  const text = JSON.stringify(value);
  if (roll >= 90 && roll < 94) return { body: Buffer.from(text.slice(0, g.int(text.length))), label: "truncated" };
  return { body: Buffer.from(text), label };
}

/**
 * With `surfaces: "chat"` the POST cases all go to /v1/chat/completions; "all" spreads them over /v1/messages,
 * /v1/messages/count_tokens and /v1/responses too.
 */
export function fuzzRequest(g: Gen, port: number, surfaces: "chat" | "all" = "chat"): FuzzRequest {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}` };
  if (g.chance(0.1)) headers["x-request-id"] = g.pick(["ok-id_1=", "has space", "a".repeat(300), "é", ""]);
  if (g.chance(0.02)) headers.host = g.pick(["evil.example", "localhost", "[::1]:1", "0.0.0.0:1"]);
  if (g.chance(0.03)) headers.origin = g.pick(["https://evil.example", `http://127.0.0.1:${port}`, "null"]);
  if (g.chance(0.03)) headers.authorization = g.pick(["Bearer x", "Basic Zm9vOmJhcg==", "Bearer"]);
  const endpoint = g.int(100);
  if (endpoint < 75) {
    const surface: Surface =
      surfaces === "chat" || endpoint < 50
        ? "chat"
        : endpoint < 60
          ? "messages"
          : endpoint < 66
            ? "count_tokens"
            : "responses";
    const path = {
      chat: "/v1/chat/completions",
      messages: "/v1/messages",
      count_tokens: "/v1/messages/count_tokens",
      responses: "/v1/responses",
    }[surface];
    const { body, label } = chatBody(g, surface);
    headers["content-type"] = g.chance(0.93)
      ? g.pick(["application/json", "application/json; charset=utf-8"])
      : g.pick([
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/xml",
        ]);
    return { method: "POST", path, headers, body, label: `${surface}:${label}` };
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
