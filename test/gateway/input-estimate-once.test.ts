/**
 * A request's input estimate (the walk of its instructions, messages and tools, util/token-estimate.ts) is counted
 * once per request, whoever asks for it: the gateway's worst case and its bill of a cut turn, the engine (a request
 * with tools), the kit's usage of a cut answer and Messages' `message_start`. And a request that needs none of them
 * counts nothing. The counting function is wrapped so its calls through the real wiring (emulator, protocol client,
 * engine, app, limits) can be counted.
 */
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { periodAt } from "../../src/gateway/limits/periods.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { estimateTokensOf } from "../../src/util/token-estimate.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, postRaw, testLimits } from "./support.js";

vi.mock("../../src/util/token-estimate.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/util/token-estimate.js")>();
  return { ...original, estimateTokensOf: vi.fn(original.estimateTokensOf) };
});
const counted = vi.mocked(estimateTokensOf);

const keys: KeyTable = new Map([["estimator", { budget: { usd: 10, period: "month" as const } }]]);
const spend = createMemorySpendStore();
let stack: Stack;

beforeAll(async () => {
  const limits = testLimits(keys, { counters: createMemoryLimitCounters(), spend, logger: silentLogger });
  stack = await startStack({ limits: limits.middleware });
});
afterAll(async () => stack.close());

/** The key's spend this month once `requests` requests have settled (a streamed one settles after its body). */
async function settledSpend(requests: number) {
  const period = periodAt("month", Date.now()).id;
  let totals = await spend.get("id-estimator", period);
  for (let attempt = 0; attempt < 150 && totals.requests < requests; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    totals = await spend.get("id-estimator", period);
  }
  return totals;
}

it("a streamed Messages request with tools, a budget and a cut answer counts its input once", async () => {
  counted.mockClear();
  const answer = await postRaw(`${stack.baseURL}/messages`, "estimator", {
    model: "auto",
    max_tokens: 2,
    stream: true,
    tools: [{ name: "lookup", description: "Looks a word up", input_schema: { type: "object", properties: {} } }],
    messages: [{ role: "user", content: "Count [[emu:tokens 20]]" }],
  });
  expect(answer.status).toBe(200);
  const totals = await settledSpend(1);
  expect(totals.requests).toBe(1);
  expect(counted).toHaveBeenCalledTimes(1);
  // The one figure is what message_start reports, what the cut answer's usage reports and what the key is billed.
  const estimate = counted.mock.results[0]?.value as number;
  const start = /"type":"message_start".*?"input_tokens":(\d+)/.exec(answer.body);
  expect(Number(start?.[1])).toBe(estimate);
  const delta = /"type":"message_delta".*?"input_tokens":(\d+)/.exec(answer.body);
  expect(Number(delta?.[1])).toBe(estimate);
  expect(totals.inputTokens).toBe(estimate);
});

it("a request that needs no estimate (no tools, no key, Cursor's usage) counts nothing", async () => {
  counted.mockClear();
  const response = await fetch(`${stack.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: "Count [[emu:tokens 3]]" }] }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { usage: { prompt_tokens: number } };
  expect(body.usage.prompt_tokens).toBeGreaterThan(0);
  expect(counted).not.toHaveBeenCalled();
});
