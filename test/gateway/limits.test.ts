/**
 * The gateway's limits through the real wiring (emulator, protocol client, engine, app on a port-0 listener), on
 * every door that runs a turn — chat completions, responses, messages — streamed and not: rpm answered with 429 and
 * the rate-limit headers (and the same headers on successes), tpm, max-parallel (and no slot leaks when a client goes
 * away), budget → `key_budget_exceeded` (the worst case reserved before the turn), and `x-cursor-bridge-cost` = the
 * turn's tokens × the model's price. The emulator's counts are deterministic (docs/emulator.md): for MESSAGE, input
 * 46 (40 cache reads), output 12.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costMicroUsd, formatUsd, priceOf, priceRules } from "../../src/gateway/limits/index.js";
import { periodAt } from "../../src/gateway/limits/periods.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import type { KeyLimits } from "../../src/surfaces/kit/principal.js";
import { createLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, postRaw, testLimits } from "./support.js";

const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";
const USAGE = { inputTokens: 46, cacheReadTokens: 40, outputTokens: 12, totalTokens: 58 };
/** About 5 s of streaming: long enough to be still running on a loaded machine; the test aborts it early. */
const SLOW = "slowly [[emu:tokens 200]] [[emu:rate 40]]";

type DoorName = "chat" | "responses" | "messages";
/**
 * A budget's worst case (gateway/limits/worst-case.ts) for MESSAGE with an output cap of 1 token, `auto` priced at
 * the table's highest prices (5 / 25 USD per million): about 30 input tokens × 5 + 1 × 25, some 175 µ$. The kit cuts
 * MESSAGE's answer at that cap, and the cut turn is billed by the same estimate, its reasoning (not asked for, so not
 * counted toward the cap) included: some 600 µ$.
 */
const CAP = 1;
/**
 * A turn whose real cost passes its worst case, as one with context Cursor adds of its own: its one-word answer fits
 * a cap of 2 tokens (8 characters), so it ends on its own and is billed Cursor's usage, whose 2,000 cache reads the
 * worst case (the request's own characters, some 110 µ$) cannot see: 500 µ$ and more. A budget of 200 µ$ admits one.
 */
const SPENDS = "how many tokens [[emu:cached 2000]] [[emu:tokens 1]]";
const SPENDS_CAP = 2;
type Body = (stream: boolean, content?: string, maxTokens?: number) => Record<string, unknown>;
const DOORS: Record<DoorName, { path: string; body: Body }> = {
  chat: {
    path: "/chat/completions",
    body: (stream, content = MESSAGE, maxTokens) => ({
      model: "auto",
      stream,
      messages: [{ role: "user", content }],
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    }),
  },
  responses: {
    path: "/responses",
    body: (stream, content = MESSAGE, maxTokens) => ({
      model: "auto",
      stream,
      store: false,
      input: content,
      ...(maxTokens === undefined ? {} : { max_output_tokens: maxTokens }),
    }),
  },
  messages: {
    path: "/messages",
    body: (stream, content = MESSAGE, maxTokens = 100) => ({
      model: "auto",
      max_tokens: maxTokens,
      stream,
      messages: [{ role: "user", content }],
    }),
  },
};

const keys: KeyTable = new Map();
const logLines: string[] = [];
let stack: Stack;
let counter = 0;
/** A fresh key with these limits (every test its own, so windows never mix). */
function key(limits: KeyLimits): string {
  counter += 1;
  const name = `key${counter}`;
  keys.set(name, limits);
  return name;
}

const spend = createMemorySpendStore();
beforeAll(async () => {
  const limits = testLimits(keys, {
    counters: createMemoryLimitCounters(),
    spend,
    logger: createLogger({ level: "warn", sink: (line) => logLines.push(line) }),
  });
  stack = await startStack({ limits: limits.middleware });
});
afterAll(async () => stack.close());

function post(
  door: DoorName,
  name: string,
  stream = false,
  content?: string,
  signal?: AbortSignal,
  maxTokens?: number,
): Promise<Response> {
  return fetch(`${stack.baseURL}${DOORS[door].path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${name}`, "anthropic-version": "2023-06-01" },
    body: JSON.stringify(DOORS[door].body(stream, content, maxTokens)),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** The cost of MESSAGE's turn on the model that served it, computed here from the price table. */
const expectedCost = (model: string) => costMicroUsd(USAGE, priceOf(model, priceRules()));

/** A key's spend this month once its request has settled (a streamed one settles after its body ends). */
async function settledSpend(name: string) {
  const period = periodAt("month", Date.now()).id;
  let totals = await spend.get(`id-${name}`, period);
  for (let attempt = 0; attempt < 100 && totals.requests === 0; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    totals = await spend.get(`id-${name}`, period);
  }
  return totals;
}

/** The error body's type and code in the door's shape. */
async function errorOf(door: DoorName, response: Response): Promise<{ type: string; code?: string; message: string }> {
  const body = (await response.json()) as {
    type?: string;
    error: { type: string; code?: string; message: string };
  };
  if (door === "messages") expect(body.type).toBe("error");
  return body.error;
}

describe.each(["chat", "responses", "messages"] as const)("%s", (door) => {
  const anthropic = door === "messages";

  it.each([false, true])(
    "rpm: successes carry the rate-limit headers, the request past the limit a 429 (stream %s)",
    async (stream) => {
      const name = key({ rpm: 2 });
      for (const remaining of [1, 0]) {
        const ok = await post(door, name, stream);
        expect(ok.status).toBe(200);
        await ok.text();
        expect(ok.headers.get("x-ratelimit-limit-requests")).toBe("2");
        expect(ok.headers.get("x-ratelimit-remaining-requests")).toBe(String(remaining));
        expect(ok.headers.get("x-ratelimit-reset-requests")).toMatch(/^((\d+m)?\d+(\.\d+)?s|\d+ms)$/);
        expect(ok.headers.get("x-ratelimit-limit-tokens")).toBeNull();
        if (anthropic) {
          expect(ok.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
          expect(ok.headers.get("anthropic-ratelimit-requests-remaining")).toBe(String(remaining));
          expect(ok.headers.get("anthropic-ratelimit-requests-reset")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        } else expect(ok.headers.get("anthropic-ratelimit-requests-limit")).toBeNull();
      }
      const refused = await post(door, name, stream);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // A wait over 10 s is shown at once rather than slept through by the SDKs.
      expect(refused.headers.get("x-should-retry")).toBe(retryAfter > 10 ? "false" : "true");
      expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("2");
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(refused.headers.get("x-cursor-bridge-cost")).toBe("0.000000");
      if (anthropic) expect(refused.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
      const error = await errorOf(door, refused);
      expect(error.type).toBe("rate_limit_error");
      if (!anthropic) expect(error.code).toBe("rate_limit_exceeded");
      expect(error.message).toContain("2 requests per minute");
    },
  );

  it("the cost header is the turn's tokens × the served model's price; the spend adds up", async () => {
    const name = key({});
    const first = await post(door, name);
    expect(first.status).toBe(200);
    const { model } = (await first.json()) as { model: string };
    const cost = expectedCost(model);
    expect(cost).toBeGreaterThan(0);
    expect(first.headers.get("x-cursor-bridge-cost")).toBe(formatUsd(cost));
    expect(first.headers.get("x-cursor-bridge-spend")).toBe(formatUsd(cost));
    const second = await post(door, name);
    await second.text();
    expect(second.headers.get("x-cursor-bridge-cost")).toBe(formatUsd(cost));
    expect(second.headers.get("x-cursor-bridge-spend")).toBe(formatUsd(2 * cost));
  });

  it("a streamed answer sends the spend so far as a header and its cost as trailers (read by Node's http client)", async () => {
    const name = key({});
    const first = await postRaw(`${stack.baseURL}${DOORS[door].path}`, name, DOORS[door].body(true));
    expect(first.status).toBe(200);
    expect(first.headers.trailer).toBe("x-cursor-bridge-cost, x-cursor-bridge-spend-after");
    expect(first.headers["x-cursor-bridge-spend"]).toBe("0.000000");
    expect(first.headers["x-cursor-bridge-cost"]).toBeUndefined();
    const served = first.body.match(/"model":"([^"]+)"/)?.[1] ?? "";
    const cost = expectedCost(served);
    expect(first.trailers["x-cursor-bridge-cost"]).toBe(formatUsd(cost));
    expect(first.trailers["x-cursor-bridge-spend-after"]).toBe(formatUsd(cost));
    const second = await postRaw(`${stack.baseURL}${DOORS[door].path}`, name, DOORS[door].body(true));
    expect(second.headers["x-cursor-bridge-spend"]).toBe(formatUsd(cost));
    expect(second.trailers["x-cursor-bridge-spend-after"]).toBe(formatUsd(2 * cost));
  });

  it.each([false, true])(
    "budget: once spent, the next request gets 429 key_budget_exceeded with the reset (stream %s)",
    async (stream) => {
      // The worst case fits the budget, the real cost uses it up: the first request runs, the second is refused.
      const name = key({ budget: { usd: 0.0002, period: "day" } });
      const first = await post(door, name, stream, SPENDS, undefined, SPENDS_CAP);
      expect(first.status).toBe(200);
      await first.text();
      const refused = await post(door, name, stream, SPENDS, undefined, SPENDS_CAP);
      expect(refused.status).toBe(429);
      expect(refused.headers.get("x-should-retry")).toBe("false");
      const tomorrow = new Date(
        Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
      );
      const reset = tomorrow.toISOString().replace(".000Z", "Z");
      expect(refused.headers.get("x-cursor-bridge-budget-reset")).toBe(reset);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      const error = await errorOf(door, refused);
      expect(error.message).toContain(`resets at ${reset}`);
      expect(error.message).toContain("has used its budget of $0.0002 per day");
      expect(error.message).toMatch(/\(in (\d+ h )?\d+ min\)|\(in \d+ (h|s)\)/);
      if (anthropic) expect(error.type).toBe("rate_limit_error");
      else expect(error.code).toBe("key_budget_exceeded");
    },
  );

  it("budget: a request whose worst case would pass the budget is refused before it runs", async () => {
    // No output cap: 4096 tokens at 25 USD per million alone pass 0.01 USD.
    const name = key({ budget: { usd: 0.01, period: "month" } });
    const refused = await post(door, name, false, undefined, undefined, door === "messages" ? 4096 : undefined);
    expect(refused.status).toBe(429);
    const error = await errorOf(door, refused);
    expect(error.message).toContain("worst-case cost");
    if (!anthropic) expect(error.code).toBe("key_budget_exceeded");
    // Nothing ran, nothing was spent: a capped request still fits.
    const capped = await post(door, name, false, undefined, undefined, CAP);
    expect(capped.status).toBe(200);
    expect(capped.headers.get("x-cursor-bridge-spend")).toBe(capped.headers.get("x-cursor-bridge-cost"));
  });

  it("budget: max_tokens 1 on 10 parallel requests spends no more than the budget (the cap holds)", async () => {
    // Each long answer would cost about 200 output tokens (some 3,500 µ$ at 17.5 USD per million) while its worst
    // case reserves 1: all ten fit a 10,000 µ$ budget. The kit cuts each at its cap (4 characters), and a cut turn is
    // billed by that estimate, so the ten together stay within the budget (they spent 5.6 times it before).
    const name = key({ budget: { usd: 0.01, period: "day" } });
    const long = "Write at length [[emu:tokens 200]]";
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, index) => {
        const response = await post(door, name, index % 2 === 0, long, undefined, 1);
        return { status: response.status, body: await response.text() };
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    const period = periodAt("day", Date.now()).id;
    let totals = await spend.get(`id-${name}`, period);
    for (let attempt = 0; attempt < 100 && totals.requests < 10; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      totals = await spend.get(`id-${name}`, period);
    }
    expect(totals.requests).toBe(10);
    expect(totals.microUsd).toBeGreaterThan(0);
    expect(totals.microUsd).toBeLessThanOrEqual(10_000);
    expect(totals.outputTokens).toBeLessThanOrEqual(10);
    // Each ended with its door's "length" ending.
    const ending = { chat: '"finish_reason":"length"', responses: '"max_output_tokens"', messages: '"max_tokens"' };
    for (const answer of answers) expect(answer.body).toContain(ending[door]);
  });

  it("tpm: a finished turn's tokens count; past the limit the next request is refused", async () => {
    const name = key({ tpm: 50 });
    const first = await post(door, name);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-tokens")).toBe("50");
    expect(first.headers.get("x-ratelimit-remaining-tokens")).toBe("50");
    await first.text();
    const refused = await post(door, name);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining-tokens")).toBe("0");
    if (anthropic) expect(refused.headers.get("anthropic-ratelimit-tokens-remaining")).toBe("0");
    expect((await errorOf(door, refused)).message).toContain("50 tokens per minute");
  });

  it("max-parallel: a second request while one streams is refused; a client going away frees its slot", async () => {
    const name = key({ maxParallel: 1 });
    const abort = new AbortController();
    const running = await post(door, name, true, SLOW, abort.signal);
    expect(running.status).toBe(200);
    const reader = running.body?.getReader();
    await reader?.read();
    const refused = await post(door, name);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await errorOf(door, refused)).message).toContain("1 requests at once");
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    // The slot is released when the abandoned body is cancelled: poll for it (bounded).
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt += 1) {
      const next = await post(door, name);
      status = next.status;
      await next.text();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
    // And a finished request (streamed or not) leaves nothing held either.
    for (const stream of [true, false, true]) {
      const next = await post(door, name, stream);
      expect(next.status).toBe(200);
      await next.text();
    }
  });

  it("a streamed answer the client leaves mid-way is billed: its input and the output it received", async () => {
    const name = key({});
    const abort = new AbortController();
    const running = await post(door, name, true, SLOW, abort.signal);
    expect(running.status).toBe(200);
    const reader = running.body?.getReader();
    const decoder = new TextDecoder();
    let received = "";
    // A few pieces of text in the door's shape (chat's content, responses' delta, messages' text).
    while ((received.match(/"(content|delta|text)":"[^"]/g) ?? []).length < 3) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) break;
      received += decoder.decode(chunk.value);
    }
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    const totals = await settledSpend(name);
    expect(totals.requests).toBe(1);
    // Cut short: some output, not the 200 tokens the whole answer has, and the prompt's estimate as input.
    expect(totals.outputTokens).toBeGreaterThan(0);
    expect(totals.outputTokens).toBeLessThan(200);
    expect(totals.inputTokens).toBeGreaterThan(0);
    expect(totals.microUsd).toBeGreaterThan(0);
  });
});

describe.each([
  ["chat", { stop: "delta" }],
  ["messages", { stop_sequences: ["delta"] }],
] as const)("%s: an answer cut at a stop sequence", (door, stop) => {
  it.each([false, true])("is billed by estimate, as received (stream %s)", async (stream) => {
    // Cursor's usage comes at the turn's end, which a cut answer never reaches: without the estimate a JSON answer
    // cut at a sequence the model was told to write cost nothing, however long it was.
    const name = key({});
    const response = await fetch(`${stack.baseURL}${DOORS[door].path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${name}`,
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({ ...DOORS[door].body(stream, "Count [[emu:tokens 20]]"), ...stop }),
    });
    expect(response.status).toBe(200);
    const body = await response.text();
    if (!stream) expect(body).toContain('alpha bravo charlie "');
    const totals = await settledSpend(name);
    expect(totals.requests).toBe(1);
    // "alpha bravo charlie " at 4 characters a token.
    expect(totals.outputTokens).toBe(5);
    expect(totals.inputTokens).toBeGreaterThan(0);
    expect(totals.microUsd).toBeGreaterThan(0);
    if (!stream) expect(response.headers.get("x-cursor-bridge-cost")).toBe(formatUsd(totals.microUsd));
  });
});

describe("a response that ends on tool calls before any checkpoint", () => {
  // Cursor has counted nothing and no checkpoint told the context size: the input reported is the request's estimate
  // (docs/api.md), and the key is billed that same figure, on every door, streamed and not.
  const prompt = 'look it up [[emu:tool lookup {"q":"x"}]]';
  const parameters = { type: "object" as const, properties: { q: { type: "string" } } };

  it.each([false, true])("is billed the input it reports (stream %s)", async (stream) => {
    const chatKey = key({});
    const chat = new OpenAI({ baseURL: stack.baseURL, apiKey: chatKey, maxRetries: 0 });
    const ask = {
      model: "auto",
      messages: [{ role: "user" as const, content: prompt }],
      tools: [{ type: "function" as const, function: { name: "lookup", parameters } }],
    };
    let chatInput: number | undefined;
    if (stream) {
      const chunks = await chat.chat.completions.create({ ...ask, stream, stream_options: { include_usage: true } });
      for await (const chunk of chunks) chatInput = chunk.usage?.prompt_tokens ?? chatInput;
    } else chatInput = (await chat.chat.completions.create(ask)).usage?.prompt_tokens;
    expect(chatInput).toBeGreaterThan(0);
    expect((await settledSpend(chatKey)).inputTokens).toBe(chatInput);

    const responsesKey = key({});
    const responses = new OpenAI({ baseURL: stack.baseURL, apiKey: responsesKey, maxRetries: 0 });
    const responseAsk = {
      model: "auto",
      input: prompt,
      store: false,
      tools: [{ type: "function" as const, name: "lookup", parameters, strict: false }],
    };
    const response = stream
      ? await responses.responses.stream(responseAsk).finalResponse()
      : await responses.responses.create(responseAsk);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect((await settledSpend(responsesKey)).inputTokens).toBe(response.usage?.input_tokens);

    const messagesKey = key({});
    const anthropic = new Anthropic({ baseURL: stack.server.url, apiKey: messagesKey, maxRetries: 0 });
    const messageAsk = {
      model: "auto",
      max_tokens: 100,
      messages: [{ role: "user" as const, content: prompt }],
      tools: [{ name: "lookup", input_schema: parameters }],
    };
    const message = stream
      ? await anthropic.messages.stream(messageAsk).finalMessage()
      : await anthropic.messages.create(messageAsk);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect((await settledSpend(messagesKey)).inputTokens).toBe(message.usage.input_tokens);
  });
});

describe("real SDK clients", () => {
  it("openai: a 429 rate_limit_exceeded with its headers, and the cost header on a success", async () => {
    const name = key({ rpm: 1 });
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: name, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: MESSAGE }] })
      .withResponse();
    expect(response.headers.get("x-cursor-bridge-cost")).toBe(formatUsd(expectedCost(data.model)));
    const error = await client.chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: MESSAGE }] })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const rateError = error as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateError.code).toBe("rate_limit_exceeded");
    expect(rateError.headers?.get("x-ratelimit-remaining-requests")).toBe("0");
  });

  it("anthropic: a key_budget_exceeded arrives as a RateLimitError the SDK does not retry", async () => {
    const name = key({ budget: { usd: 0.0002, period: "month" } });
    const client = new Anthropic({ baseURL: stack.server.url, apiKey: name, maxRetries: 3 });
    await client.messages.create({
      model: "auto",
      max_tokens: SPENDS_CAP,
      messages: [{ role: "user", content: SPENDS }],
    });
    const started = Date.now();
    const error = await client.messages
      .create({ model: "auto", max_tokens: SPENDS_CAP, messages: [{ role: "user", content: SPENDS }] })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as Error).message).toContain("budget");
    // x-should-retry: false: answered at once, not after the SDK's backoff.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe("budget warning", () => {
  it("past the soft threshold answers carry a warning, logged once when a request crosses it", async () => {
    // The turn costs more than 240 µ$ (80 % of a 300 µ$ budget): the first request crosses 80 %.
    const name = key({ budget: { usd: 0.0003, period: "week" } });
    const first = await post("messages", name, false, SPENDS, undefined, SPENDS_CAP);
    await first.text();
    expect(first.headers.get("x-cursor-bridge-warnings")).toMatch(/^budget \d+% used \(/);
    const crossings = logLines.filter((line) => line.includes(`key "${name}"`) && line.includes("of its budget"));
    expect(crossings).toHaveLength(1);
  });

  it("OpenCode gets a spent budget in the form it shows at once (402, the reset in words), like a usage limit", async () => {
    const name = key({ budget: { usd: 0.0002, period: "month" } });
    await (await post("chat", name, false, SPENDS, undefined, SPENDS_CAP)).text();
    const refused = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${name}`, "user-agent": "opencode/1.0.0" },
      body: JSON.stringify(DOORS.chat.body(false, SPENDS, SPENDS_CAP)),
    });
    expect(refused.status).toBe(402);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("key_budget_exceeded");
    expect(error.message).toMatch(/\(in \d+ days?( \d+ hours?)?\)|\(in \d+ hours?/);
  });

  it("requests without a key run as before: no headers", async () => {
    const response = await post("chat", "nobody");
    expect(response.status).toBe(200);
    await response.text();
    expect(response.headers.get("x-cursor-bridge-cost")).toBeNull();
    expect(response.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });

  it("/v1/models and count_tokens are neither limited nor counted", async () => {
    const name = key({ rpm: 1 });
    for (let i = 0; i < 3; i += 1) {
      const models = await fetch(`${stack.baseURL}/models`, { headers: { authorization: `Bearer ${name}` } });
      expect(models.status).toBe(200);
      expect(models.headers.get("x-ratelimit-limit-requests")).toBeNull();
      await models.text();
      const counted = await fetch(`${stack.baseURL}/messages/count_tokens`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": name, "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(counted.status).toBe(200);
      expect(counted.headers.get("x-ratelimit-limit-requests")).toBeNull();
      await counted.text();
    }
    const ok = await post("chat", name);
    expect(ok.status).toBe(200);
    await ok.text();
  });
});
