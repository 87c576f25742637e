/**
 * Budgets hold under concurrency (the worst case is reserved before the turn, atomically in the spend store): 100
 * requests at once against a budget for 10 admit exactly 10, on the memory, file and Redis stores and across two
 * instances sharing Redis, and the spend recorded is the sum of the cost headers. The price table here makes a
 * turn's worst case its real cost (input free, output 10 USD per million, the cap = the turn's 12 output tokens), so
 * "a budget for 10" is exact. Then Redis is restarted while a `max_parallel: 1` request streams: the key serves again
 * within 30 s of Redis' return, and that request's cost (queued on disk while Redis was down) is in its spend.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { periodAt } from "../../src/gateway/limits/periods.js";
import { createFileSettleQueue } from "../../src/stores/file/settle-queue.js";
import { createFileSpendStore } from "../../src/stores/file/spend-store.js";
import { createMemoryLimitCounters } from "../../src/stores/memory/limit-counters.js";
import { createMemorySpendStore } from "../../src/stores/memory/spend-store.js";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import type { LimitCounters, SpendStore } from "../../src/stores/types.js";
import { silentLogger } from "../../src/util/logger.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";
/** 12 output tokens at 10 USD per million. */
const COST = 120;
const PRICES = [{ pattern: "*", price: { input: 0, cachedInput: 0, output: 10 } }];
const BUDGET = { usd: (10 * COST) / 1_000_000, period: "month" as const };
const skipRedis = missingBinaries("redis-server", "redis-cli");

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function instance(counters: LimitCounters, spend: SpendStore, keys: KeyTable, existing?: Stack) {
  const limits = testLimits(keys, { counters, spend, logger: silentLogger, prices: PRICES });
  const stack = await startStack({
    limits: limits.middleware,
    ...(existing === undefined ? {} : { existingEmulator: existing.emulator }),
  });
  cleanups.push(async () => {
    limits.close();
    await stack.close();
  });
  return { stack, limits };
}

function send(stack: Stack, key: string): Promise<Response> {
  return fetch(`${stack.baseURL}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "auto", max_tokens: 12, messages: [{ role: "user", content: MESSAGE }] }),
  });
}

/** 100 requests at once spread over the stacks; the admitted count, the codes of the refused and the costs. */
async function hundred(stacks: Stack[], key: string) {
  const responses = await Promise.all(
    Array.from({ length: 100 }, (_, i) => send(stacks[i % stacks.length] as Stack, key)),
  );
  const bodies = await Promise.all(
    responses.map((response) => response.json() as Promise<{ error?: { type: string } }>),
  );
  const admitted = responses.filter((response) => response.status === 200);
  const costs = admitted.map((response) => Math.round(Number(response.headers.get("x-cursor-bridge-cost")) * 1e6));
  const refused = responses.filter((response) => response.status !== 200).map((response) => response.status);
  return { admitted: admitted.length, costs, refused, bodies };
}

async function redisClient(redis: RedisServer, namespace: string): Promise<StoreClient> {
  const client = await connectStore({ url: redis.url, namespace, timeoutMs: 2000 });
  cleanups.push(() => client.close());
  return client;
}

describe("100 requests at once against a budget for 10", () => {
  const keys: KeyTable = new Map([["team", { budget: BUDGET }]]);
  const period = periodAt("month", Date.now()).id;

  const expectExactlyTen = async (stacks: Stack[], spend: SpendStore) => {
    const { admitted, costs, refused } = await hundred(stacks, "team");
    expect(admitted).toBe(10);
    expect(new Set(refused)).toEqual(new Set([429]));
    expect(costs.every((cost) => cost === COST)).toBe(true);
    const recorded = await spend.get("id-team", period);
    expect(recorded.microUsd).toBe(costs.reduce((sum, cost) => sum + cost, 0));
    expect(recorded.requests).toBe(10);
  };

  it("memory", async () => {
    const spend = createMemorySpendStore();
    const { stack } = await instance(createMemoryLimitCounters(), spend, keys);
    await expectExactlyTen([stack], spend);
  });

  it("file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cb-budget-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const spend = createFileSpendStore({ dataDir: dir });
    const { stack } = await instance(createMemoryLimitCounters(), spend, keys);
    await expectExactlyTen([stack], spend);
    // Durable: a fresh store over the same file reads the same spend.
    expect((await createFileSpendStore({ dataDir: dir }).get("id-team", period)).microUsd).toBe(10 * COST);
  });

  describe.skipIf(skipRedis !== undefined)("redis", () => {
    let redis: RedisServer;
    it("one instance, then two instances sharing the store", async () => {
      redis = await startRedisServer();
      cleanups.push(() => redis.close());
      const one = await redisClient(redis, "one");
      const first = await instance(createRedisLimitCounters(one), createRedisSpendStore(one), keys);
      await expectExactlyTen([first.stack], createRedisSpendStore(one));

      const [a, b] = [await redisClient(redis, "two"), await redisClient(redis, "two")];
      const left = await instance(createRedisLimitCounters(a), createRedisSpendStore(a), keys);
      const right = await instance(createRedisLimitCounters(b), createRedisSpendStore(b), keys, left.stack);
      await expectExactlyTen([left.stack, right.stack], createRedisSpendStore(a));
    });
  });
});

describe.skipIf(skipRedis !== undefined)("Redis restarted while a max_parallel: 1 request runs", () => {
  it("the key serves again within 30 s of Redis' return, and that request's cost is in its spend", async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.close());
    const dir = await mkdtemp(join(tmpdir(), "cb-outage-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const client = await redisClient(redis, "outage");
    const keys: KeyTable = new Map([["solo", { maxParallel: 1 }]]);
    const { stack } = await instanceWithQueue(client, keys, dir);
    const running = await fetch(`${stack.baseURL}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer solo", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({
        model: "auto",
        // Room for the whole answer: the kit cuts at the cap (4 characters a token).
        max_tokens: 1000,
        stream: true,
        messages: [{ role: "user", content: "slowly [[emu:tokens 120]] [[emu:rate 40]]" }],
      }),
    });
    expect(running.status).toBe(200);
    const reader = running.body?.getReader();
    await reader?.read();
    // The slot is held: a second request is refused.
    const second = await send(stack, "solo");
    expect(second.status).toBe(429);
    await second.text();
    await redis.stop("keep");
    // The stream ends while Redis is down: its settle fails and waits on disk.
    for (;;) if ((await reader?.read())?.done !== false) break;
    await redis.start();
    const back = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - back < 30_000) {
      const next = await send(stack, "solo");
      status = next.status;
      await next.text();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(status).toBe(200);
    const spend = createRedisSpendStore(client);
    const period = periodAt("month", Date.now()).id;
    let totals = await spend.get("id-solo", period);
    for (let i = 0; i < 60 && totals.requests < 2; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      totals = await spend.get("id-solo", period);
    }
    // The streamed request (120 output tokens) and the one that got in afterwards.
    expect(totals.requests).toBe(2);
    expect(totals.outputTokens).toBeGreaterThanOrEqual(120);
  }, 120_000);
});

async function instanceWithQueue(client: StoreClient, keys: KeyTable, dataDir: string) {
  const limits = testLimits(keys, {
    counters: createRedisLimitCounters(client),
    spend: createRedisSpendStore(client),
    logger: silentLogger,
    prices: PRICES,
    queue: createFileSettleQueue({ dataDir }),
  });
  const stack = await startStack({ limits: limits.middleware });
  cleanups.push(async () => {
    limits.close();
    await stack.close();
  });
  return { stack, limits };
}
