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
import { Agent } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { type FuzzRequest, fuzzRequest, Gen, MAX_BODY, prng } from "./support/fuzz-cases.js";
import { type Answer, counted, healthCase, MAX_ANSWER_MS, runCases, send } from "./support/fuzz-run.js";

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const CASES = Number(process.env.FUZZ_CASES ?? 10_000);
const SURFACES = process.env.FUZZ_SURFACES === "chat" ? "chat" : "all";
const CONCURRENCY = 12;

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
    const upstream = { count: 0 };
    const { byLabel, byStatus, failures, slowest, seconds } = await runCases(
      agent,
      port,
      requests,
      CONCURRENCY,
      (req, answer) => judge(req, answer, upstream),
    );
    const health = await send(agent, port, healthCase(port));
    process.stdout.write(
      `reliability: fuzzer seed=${SEED} surfaces=${SURFACES} ran ${CASES} cases in ${seconds} s; statuses ${counted(byStatus)}; ` +
        `upstream-caused 5xx/frames ${upstream.count}; slowest answer ${slowest.ms} ms (${slowest.label}); ` +
        `kinds ${counted(byLabel)}; failures ${failures.length}\n`,
    );
    expect(failures).toEqual([]);
    expect(slowest.ms).toBeLessThan(MAX_ANSWER_MS);
    if (SURFACES === "all") expect(byLabel.get("count_tokens:valid") ?? 0).toBeGreaterThan(0);
    expect(health.status).toBe(200);
    expect(byStatus.get(200) ?? 0).toBeGreaterThan(CASES / 10);
  }, 300_000);
});
