/**
 * Redis at its `maxmemory`, run with the eviction policy docs/team.md gives in its compose example: conversations go
 * to make room, never what bills and limits requests. A running request's budget reservation and parallel slot (short
 * expiries, renewed while it runs) and a key's spend (no expiry: it must outlive any conversation) stay, so a
 * second request is still refused while the first holds the budget, and an idle key keeps its spend.
 *
 * With `volatile-ttl` (what the docs said before) Redis evicted the keys closest to their expiry first: the
 * reservations and slots of running requests, so a full Redis let keys spend past their budgets.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisConversationStore } from "../../src/stores/redis/conversation-store.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import { sampleRecord } from "../support/conversation-record.js";
import { missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");

/** The `--maxmemory-policy` of the compose example in docs/team.md. */
function documentedPolicy(): string {
  const team = readFileSync(new URL("../../docs/team.md", import.meta.url), "utf8");
  const policy = /"--maxmemory-policy",\s*"([a-z-]+)"/.exec(team)?.[1];
  if (policy === undefined) throw new Error("docs/team.md gives no --maxmemory-policy in its compose example");
  return policy;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const spendEntry = (microUsd: number) => ({
  microUsd,
  requests: 1,
  inputTokens: 1,
  outputTokens: 1,
  cachedTokens: 0,
  reasoningTokens: 0,
});

describe.skipIf(skip !== undefined)("Redis at its maxmemory with the documented policy", () => {
  let server: RedisServer;
  let client: StoreClient;
  beforeAll(async () => {
    server = await startRedisServer([
      "--maxmemory",
      "8mb",
      "--maxmemory-policy",
      documentedPolicy(),
      // Redis samples keys to find the least recently used: more samples make it pick what true LRU would.
      "--maxmemory-samples",
      "64",
    ]);
    client = await connectStore({ url: server.url, namespace: "evict", timeoutMs: 5000 });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("evicts conversations, not a running request's reservation and slot, nor an idle key's spend", async () => {
    const spend = createRedisSpendStore(client);
    const counters = createRedisLimitCounters(client);
    const conversations = createRedisConversationStore({ client, maxEntries: 100_000 });
    const big = "x".repeat(100_000);
    let saved = 0;
    const fill = async (count: number) => {
      for (let i = 0; i < count; i += 1) {
        saved += 1;
        await conversations.save(sampleRecord(`conv-${saved}`, Date.now(), `${saved} ${big}`));
      }
    };
    // A key that spent this month and has been idle since.
    await spend.settle({ keyId: "idle", period: "month:2026-11", id: "old", entry: spendEntry(5_000_000) });
    // Redis's LRU clock counts seconds: each step is newer than all before it.
    await pause(2500);
    await fill(60);
    await pause(2500);
    const now = Date.now();
    const reserve = (id: string) =>
      spend.reserve({
        keyId: "busy",
        period: "day:2026-11-28",
        id,
        microUsd: 60,
        budgetMicroUsd: 100,
        now,
        leaseMs: 600_000,
      });
    const admit = (slotId: string) =>
      counters.admit({
        keyId: "busy",
        slotId,
        now,
        windowMs: 60_000,
        rpm: 0,
        tpm: 0,
        maxParallel: 1,
        leaseMs: 600_000,
      });
    expect((await reserve("running")).admitted).toBe(true);
    expect((await admit("running")).refused).toBeUndefined();
    await fill(40);
    const evicted = Number(/evicted_keys:(\d+)/.exec(await client.redis.info("stats"))?.[1]);
    expect(evicted).toBeGreaterThan(0);
    // The first request still holds its budget and its slot: the second is refused for both.
    expect((await reserve("second")).admitted).toBe(false);
    expect((await admit("second")).refused).toBe("parallel");
    expect((await spend.get("idle", "month:2026-11")).microUsd).toBe(5_000_000);
    // What went were conversations (the oldest records among them); the newest is there.
    expect((await client.redis.keys(`${client.prefix}conv:*`)).length).toBeLessThan(saved);
    expect(await conversations.load(`conv-${saved}`)).toBeDefined();
  }, 60_000);
});
