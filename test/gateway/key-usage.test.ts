/**
 * The per-key usage snapshot (KeyUsage) and the status page's key table: after real turns through the wiring, each
 * key's requests, tokens, spend and budget with its period's reset; the table only for a request the admin check
 * accepts, and only when keys are in use.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  costMicroUsd,
  createKeyUsageSource,
  type KeyUsage,
  priceOf,
  priceRules,
} from "../../src/gateway/limits/index.js";
import type { StatusSnapshot } from "../../src/server/status-page.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";
const keys: KeyTable = new Map([
  ["alice", { budget: { usd: 1, period: "day" as const } }],
  ["bob", { rpm: 100 }],
]);
let stack: Stack;
let usage: ReturnType<typeof createKeyUsageSource>;

beforeAll(async () => {
  const limits = testLimits(keys, {
    counters: createMemoryLimitCounters(),
    spend: createMemorySpendStore(),
    logger: silentLogger,
  });
  usage = createKeyUsageSource(limits);
  stack = await startStack({
    limits: limits.middleware,
    status: { keys: { usage, isAdmin: (request) => request.headers.get("x-test-admin") === "yes" } },
  });
});
afterAll(async () => stack.close());

async function chat(key: string): Promise<string> {
  const response = await fetch(`${stack.baseURL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: "auto", messages: [{ role: "user", content: MESSAGE }] }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { model: string }).model;
}

describe("KeyUsage", () => {
  it("lists each key's requests, tokens, spend, budget and reset; the status page shows it to the admin only", async () => {
    const model = await chat("alice");
    await chat("alice");
    await chat("bob");
    const cost = costMicroUsd(
      { inputTokens: 46, cacheReadTokens: 40, outputTokens: 12, totalTokens: 58 },
      priceOf(model, priceRules()),
    );
    const rows = await usage.keyUsage();
    expect(rows.map((row) => row.keyName)).toEqual(["alice", "bob"]);
    const [alice, bob] = rows as [KeyUsage, KeyUsage];
    expect(alice).toMatchObject({
      keyId: "id-alice",
      period: "day",
      requests: 2,
      inputTokens: 92,
      outputTokens: 24,
      cachedTokens: 80,
      reasoningTokens: 14,
      spendUsd: (2 * cost) / 1_000_000,
      budgetUsd: 1,
    });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(alice.resetsAt).toBe(midnight.toISOString());
    expect(bob).toMatchObject({ period: "month", requests: 1, budgetUsd: undefined, limits: { rpm: 100 } });

    const asAdmin = await fetch(`${stack.server.url}/status.json`, { headers: { "x-test-admin": "yes" } });
    const snapshot = (await asAdmin.json()) as StatusSnapshot;
    expect(snapshot.keys).toEqual(rows);
    const html = await (await fetch(`${stack.server.url}/`, { headers: { "x-test-admin": "yes" } })).text();
    expect(html).toContain('id="keys-section"');
    expect(html).toContain('"keyName":"alice"');

    const anyone = (await (await fetch(`${stack.server.url}/status.json`)).json()) as StatusSnapshot;
    expect(anyone.keys).toBeUndefined();
    expect(await (await fetch(`${stack.server.url}/`)).text()).not.toContain('"keyName"');
  });
});
