/**
 * Two bridge instances on one Redis (Debian's redis-server) enforce one limit together: N+1 requests spread over
 * both — sent at once, over every door — get exactly one 429, and the spend one instance adds is the spend the other
 * reports. Each instance has its own connection to the store, as separate processes would. Without redis-server
 * this file is skipped with a printed reason, unless CI=true (then it fails).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costMicroUsd, formatUsd, priceOf, priceRules } from "../../src/gateway/limits/index.js";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { type Stack, startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

const skip = missingBinaries("redis-server", "redis-cli");
const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";

describe.skipIf(skip !== undefined)("two instances sharing Redis", () => {
  let redis: RedisServer;
  const clients: StoreClient[] = [];
  const stacks: Stack[] = [];
  const keys: KeyTable = new Map([
    ["team-rpm", { rpm: 5 }],
    ["team-spend", {}],
  ]);

  beforeAll(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 2; i += 1) {
      const client = await connectStore({ url: redis.url, namespace: "limits-test", timeoutMs: 2000 });
      clients.push(client);
      const limits = testLimits(keys, {
        counters: createRedisLimitCounters(client),
        spend: createRedisSpendStore(client),
        logger: silentLogger,
      });
      const first = stacks[0];
      stacks.push(
        await startStack({ limits: limits.middleware, ...(first ? { existingEmulator: first.emulator } : {}) }),
      );
    }
  });
  afterAll(async () => {
    for (const stack of stacks.reverse()) await stack.close();
    for (const client of clients) await client.close();
    await redis?.close();
  });

  const send = (instance: number, door: number, key: string) => {
    const stack = stacks[instance] as Stack;
    const [path, body] = [
      ["/chat/completions", { model: "auto", messages: [{ role: "user", content: MESSAGE }] }],
      ["/responses", { model: "auto", store: false, input: MESSAGE }],
      ["/messages", { model: "auto", max_tokens: 100, messages: [{ role: "user", content: MESSAGE }] }],
    ][door % 3] as [string, unknown];
    return fetch(`${stack.baseURL}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${key}`,
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
  };

  it("rpm 5: six requests at once, spread over both instances and every door, get exactly one 429", async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => send(i % 2, i, "team-rpm")));
    await Promise.all(responses.map((response) => response.text()));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const remaining = responses
      .filter((response) => response.status === 200)
      .map((response) => Number(response.headers.get("x-ratelimit-remaining-requests")))
      .sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4]);
    // Both instances still refuse: the window is shared.
    for (const instance of [0, 1]) {
      const again = await send(instance, 0, "team-rpm");
      await again.text();
      expect(again.status).toBe(429);
    }
  });

  it("the spend one instance adds is the spend the other reports", async () => {
    const first = await send(0, 0, "team-spend");
    const { model } = (await first.json()) as { model: string };
    const cost = costMicroUsd(
      { inputTokens: 46, cacheReadTokens: 40, outputTokens: 12, totalTokens: 58 },
      priceOf(model, priceRules()),
    );
    expect(first.headers.get("x-cursor-bridge-spend")).toBe(formatUsd(cost));
    const second = await send(1, 0, "team-spend");
    await second.text();
    expect(second.headers.get("x-cursor-bridge-spend")).toBe(formatUsd(2 * cost));
  });
});
