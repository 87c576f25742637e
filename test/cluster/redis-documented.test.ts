/**
 * Redis run as docs/team.md's compose example runs it (its `redis-server` command line, read from the page).
 *
 * At its `maxmemory`, conversations go to make room, never what bills and limits requests. A running request's budget
 * reservation and parallel slot (short expiries, renewed while it runs) and a key's spend (no expiry: it must outlive
 * any conversation) stay, so a second request is still refused while the first holds the budget, and an idle key keeps
 * its spend. With `volatile-ttl` (what the docs said before) Redis evicted the keys closest to their expiry first: the
 * reservations and slots of running requests, so a full Redis let keys spend past their budgets.
 *
 * Killed (a crash, an OOM kill, a host reboot) and started again, it still has the spend, the keys and the settle
 * markers written before: without the append-only file (what the example ran before) Redis kept only its last
 * snapshot, minutes old, and the spend since was gone.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisConversationStore } from "../../src/stores/redis/conversation-store.js";
import { createRedisKeyStore } from "../../src/stores/redis/key-store.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import type { VirtualKeyRecord } from "../../src/stores/types.js";
import { sampleRecord } from "../support/conversation-record.js";
import { missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");

/** The options of the `redis-server` command of the compose example in docs/team.md. */
function documentedArgs(): string[] {
  const team = readFileSync(new URL("../../docs/team.md", import.meta.url), "utf8");
  const command = /command: \["redis-server",(.*)\]/.exec(team)?.[1];
  if (command === undefined) throw new Error("docs/team.md has no redis-server command in its compose example");
  return JSON.parse(`[${command}]`) as string[];
}

/** The documented options with `--maxmemory` replaced by `bytes` (a test-sized Redis). */
function documentedWith(bytes: string): string[] {
  const args = documentedArgs();
  const at = args.indexOf("--maxmemory");
  if (at >= 0) args.splice(at, 2);
  return [...args, "--maxmemory", bytes];
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until Redis has written and synced its append-only file: no buffered write, no fsync pending. */
async function aofWritten(client: StoreClient): Promise<void> {
  for (let tries = 0; tries < 100; tries++) {
    const info = await client.redis.info("persistence");
    const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1]);
    if (field("aof_enabled") !== 1) throw new Error("the documented options turn the append-only file on");
    if (field("aof_buffer_length") === 0 && field("aof_pending_bio_fsync") === 0) return;
    await pause(50);
  }
  throw new Error("Redis did not write its append-only file within 5 s");
}
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
      ...documentedWith("8mb"),
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

describe.skipIf(skip !== undefined)("Redis killed and started again with the documented options", () => {
  let server: RedisServer;
  afterAll(async () => server?.close());

  it("keeps the spend, the keys and the settle markers written before the kill", async () => {
    server = await startRedisServer(documentedWith("64mb"));
    const open = () => connectStore({ url: server.url, namespace: "durable", timeoutMs: 5000 });
    let client = await open();
    const record: VirtualKeyRecord = {
      id: "vk_durable",
      name: "durable",
      hash: "0".repeat(64),
      prefix: "cbk-durabl",
      createdAt: new Date().toISOString(),
      limits: {},
    };
    await createRedisKeyStore(client).create(record);
    const spend = createRedisSpendStore(client);
    await spend.settle({ keyId: "vk_durable", period: "month:2026-11", id: "r1", entry: spendEntry(1234) });
    // With `appendfsync everysec`, Redis hands its writes to the append-only file before it answers, except while a
    // background fsync is slow: then for up to 2 s (docs/team.md). Killed after that, it keeps them.
    await aofWritten(client);
    await client.close();
    await server.stop("hard");
    await server.start();
    client = await open();
    try {
      const back = createRedisSpendStore(client);
      expect((await back.get("vk_durable", "month:2026-11")).microUsd).toBe(1234);
      // The settle marker too: a settle retried after the crash still counts once.
      const retried = await back.settle({
        keyId: "vk_durable",
        period: "month:2026-11",
        id: "r1",
        entry: spendEntry(1234),
      });
      expect(retried.applied).toBe(false);
      expect((await createRedisKeyStore(client).list()).map((key) => key.id)).toEqual(["vk_durable"]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
