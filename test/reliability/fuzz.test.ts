/**
 * Seeded fuzzer over every endpoint of the real stack (bridge over a socket, emulator upstream). Each case is a
 * request built from valid shapes and then broken: fields removed or replaced by random JSON, unknown keys, weird
 * strings, deep nesting, truncated or non-UTF-8 bodies, wrong content types, methods, hosts, origins and request ids.
 * Every answer must be well-formed: no 500 ever, a 5xx only when Cursor (the emulator) caused it, an OpenAI error
 * body on every error, a complete SSE stream or one error frame on a 200 stream, and the server still healthy at the
 * end, and no answer takes longer than 30 s. `FUZZ_SEED` and `FUZZ_CASES` reproduce or widen a run; the seed and the
 * counts are printed. POST cases go to all four POST endpoints: chat completions, /v1/messages,
 * /v1/messages/count_tokens and /v1/responses (`FUZZ_SURFACES=chat` keeps them to chat completions).
 */
import { Agent, request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { type FuzzRequest, fuzzRequest, Gen, MAX_BODY, prng } from "./support/fuzz-cases.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
const SURFACES = process.env.FUZZ_SURFACES === "chat" ? "chat" : "all";
const CONCURRENCY = 12;
/** No answer may take longer than this (a hang, or one request stalling the others). */
const MAX_ANSWER_MS = 30_000;

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
    outgoing.setTimeout(MAX_ANSWER_MS, () => outgoing.destroy(new Error(`no answer within ${MAX_ANSWER_MS / 1000} s`)));
    outgoing.on("error", reject);
    outgoing.end(req.body);
  });
}

const UPSTREAM_CODES = new Set(["upstream_unavailable", "upstream_error", "upstream_timeout", "blob_not_found"]);

/** OpenAI's `{error:{message,type,param,code}}`, or Anthropic's `{type:"error",error:{type,message}}`. */
function checkErrorBody(text: string, anthropic = false): string | undefined {
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
  if (/\n\s+at /.test(error.message)) return "stack trace in message";
  if (anthropic) return (parsed as { type?: unknown }).type === "error" ? undefined : "no type: error";
  if (!(error.param === null || typeof error.param === "string")) return "bad param";
  if (!(error.code === null || typeof error.code === "string")) return "bad code";
  return undefined;
}

/** The machine code of an error body in either shape (Anthropic's carries ours in `error.type` only). */
function codeOf(text: string): string {
  const error = (JSON.parse(text) as { error?: { code?: string; type?: string } }).error;
  return error?.code ?? error?.type ?? "";
}

/** Undefined when the answer is well-formed; otherwise what is wrong with it. */
function judge(req: FuzzRequest, answer: Answer, upstream: { count: number }): string | undefined {
  const { status, headers, body } = answer;
  const type = String(headers["content-type"] ?? "");
  if (status === 500) return "500";
  const anthropic = req.path.startsWith("/v1/messages");
  if (status > 500) {
    const code = codeOf(body);
    if (!UPSTREAM_CODES.has(code) && !(anthropic && status >= 502)) return `${status} not caused upstream (${code})`;
    upstream.count += 1;
  }
  if (status !== 408 && typeof headers["x-request-id"] !== "string") return "no x-request-id";
  if (req.method === "HEAD" || req.method === "OPTIONS" || status === 204) return undefined;
  if (status >= 400) {
    if (!type.includes("application/json")) return `error with content-type ${type}`;
    return checkErrorBody(body, anthropic);
  }
  if (type.includes("text/event-stream") && req.path !== "/v1/chat/completions") {
    // Anthropic and Responses streams end with their own final event (or an error event).
    const last = body.trim().split("\n\n").at(-1) ?? "";
    const final = /message_stop|response\.(completed|incomplete|failed)|event: error/.test(last);
    return final ? undefined : `stream ended without a final event: ${last.slice(0, 120)}`;
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
  // The status page is the one HTML answer.
  if (req.method === "GET" && req.path === "/" && type.startsWith("text/html")) {
    return body.startsWith("<!doctype html>") ? undefined : "status page is not an HTML document";
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
    const requests = Array.from({ length: CASES }, () => fuzzRequest(g, port, SURFACES));
    const byLabel = new Map<string, number>();
    const byStatus = new Map<number, number>();
    const failures: string[] = [];
    const upstream = { count: 0 };
    const slowest = { ms: 0, label: "" };
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        const req = requests[index] as FuzzRequest;
        let problem: string | undefined;
        let status = 0;
        const sent = Date.now();
        try {
          const answer = await send(agent, port, req);
          const took = Date.now() - sent;
          if (took > slowest.ms) Object.assign(slowest, { ms: took, label: req.label });
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
      `reliability: fuzzer seed=${SEED} surfaces=${SURFACES} ran ${CASES} cases in ${seconds} s; statuses ${statuses.join(" ")}; ` +
        `upstream-caused 5xx/frames ${upstream.count}; slowest answer ${slowest.ms} ms (${slowest.label}); ` +
        `kinds ${labels.join(" ")}; failures ${failures.length}\n`,
    );
    expect(failures).toEqual([]);
    expect(slowest.ms).toBeLessThan(MAX_ANSWER_MS);
    if (SURFACES === "all") expect(byLabel.get("count_tokens:valid") ?? 0).toBeGreaterThan(0);
    expect(health.status).toBe(200);
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(CASES / 10);
  }, 300_000);
});
