/**
 * The Redis spend store's record of running requests (SpendStore.noteRunning), on Debian's redis-server: an
 * instance that dies mid-request stops noting it, and once its note's lease has run out the key's next reservation,
 * on any instance, or the sweep every instance runs (without a request of that key) charges what was noted, once,
 * until a settle that still comes replaces it by the real cost; a request that settles is charged its real cost
 * only; an instance that stops charges its unsettled requests at once. Two store connections stand for two instances. Without
 * redis-server this file is skipped with a printed reason, unless CI=true (then it fails).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisSpendStore, RUN_LEASE_MS } from "../../src/stores/redis/spend-store.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");

const PERIOD = "month:2026-11";
const soFar = { microUsd: 7000, requests: 1, inputTokens: 100, outputTokens: 20, cachedTokens: 0, reasoningTokens: 0 };
const real = { ...soFar, microUsd: 9000, outputTokens: 30 };

describe.skipIf(skip !== undefined)("running requests on the Redis spend store", () => {
  let redis: RedisServer;
  const clients: StoreClient[] = [];
  let clock = Date.parse("2026-11-28T12:00:00Z");
  const instance = async () => {
    const client = await connectStore({ url: redis.url, namespace: "running-test", timeoutMs: 2000 });
    clients.push(client);
    return createRedisSpendStore(client, { now: () => clock });
  };
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await redis?.close();
  });
  const reserve = (store: Awaited<ReturnType<typeof instance>>, keyId: string, id: string) =>
    store.reserve({
      keyId,
      period: PERIOD,
      id,
      microUsd: 1000,
      budgetMicroUsd: 1_000_000,
      now: clock,
      leaseMs: 30_000,
    });
  /** Waits until the best-effort note has reached Redis. */
  const noted = async (keyId: string) => {
    const client = clients[0] as StoreClient;
    const run = `${client.prefix}spend:${PERIOD}:${keyId}:run`;
    for (let i = 0; i < 200 && (await client.redis.hlen(run)) === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await client.redis.hlen(run)).toBe(1);
  };

  it("a request whose instance died is charged what it noted, once, at the key's next reservation", async () => {
    const [dead, alive] = [await instance(), await instance()];
    expect((await reserve(dead, "k1", "r1")).admitted).toBe(true);
    dead.noteRunning?.([{ keyId: "k1", period: PERIOD, id: "r1", entry: soFar }]);
    await noted("k1");
    // Within the note's lease it is still running: nothing is charged.
    clock += RUN_LEASE_MS - 1000;
    expect((await reserve(alive, "k1", "r2")).spent.microUsd).toBe(0);
    clock += 2000;
    const after = await reserve(alive, "k1", "r3");
    expect(after.spent).toMatchObject({ microUsd: 7000, requests: 1, outputTokens: 20 });
    expect((await reserve(alive, "k1", "r4")).spent.microUsd).toBe(7000);
    // A settle that still comes (the instance was only cut off) replaces the estimate by the real cost, once.
    const late = await dead.settle({ keyId: "k1", period: PERIOD, id: "r1", entry: real });
    expect(late).toMatchObject({ applied: true, before: { microUsd: 7000 }, after: { microUsd: 9000 } });
    expect(await alive.get("k1", PERIOD)).toMatchObject({ microUsd: 9000, requests: 1, outputTokens: 30 });
    expect((await dead.settle({ keyId: "k1", period: PERIOD, id: "r1", entry: real })).applied).toBe(false);
    expect((await alive.get("k1", PERIOD)).microUsd).toBe(9000);
  });

  it("a request whose instance died is charged by any instance's sweep, without a request of its key", async () => {
    const [dead, alive] = [await instance(), await instance()];
    expect((await reserve(dead, "k3", "t1")).admitted).toBe(true);
    dead.noteRunning?.([{ keyId: "k3", period: PERIOD, id: "t1", entry: soFar }]);
    await noted("k3");
    // A live instance's request of another key, noted since and renewed: not charged by the sweep.
    expect((await reserve(alive, "k4", "u1")).admitted).toBe(true);
    clock += RUN_LEASE_MS - 1000;
    await alive.chargeLapsed?.();
    expect((await alive.get("k3", PERIOD)).microUsd).toBe(0);
    alive.noteRunning?.([{ keyId: "k4", period: PERIOD, id: "u1", entry: soFar }]);
    await noted("k4");
    clock += 2000;
    expect(await alive.chargeLapsed?.()).toBe(1);
    expect(await alive.get("k3", PERIOD)).toMatchObject({ microUsd: 7000, requests: 1, outputTokens: 20 });
    expect((await alive.get("k4", PERIOD)).microUsd).toBe(0);
    // Once: a second sweep, another instance's, and the key's next reservation add nothing.
    expect(await dead.chargeLapsed?.()).toBe(0);
    expect((await reserve(alive, "k3", "t2")).spent.microUsd).toBe(7000);
    // A settle that still comes replaces the estimate by the real cost, once.
    expect((await dead.settle({ keyId: "k3", period: PERIOD, id: "t1", entry: real })).applied).toBe(true);
    expect((await dead.settle({ keyId: "k3", period: PERIOD, id: "t1", entry: real })).applied).toBe(false);
    expect((await alive.get("k3", PERIOD)).microUsd).toBe(9000);
    // The live request settles: it is charged its real cost only, however many sweeps come later.
    await alive.settle({ keyId: "k4", period: PERIOD, id: "u1", entry: real });
    clock += 10 * RUN_LEASE_MS;
    expect(await alive.chargeLapsed?.()).toBe(0);
    expect((await alive.get("k4", PERIOD)).microUsd).toBe(9000);
  });

  it("an instance that stops charges its unsettled requests at once; their settle still replaces the estimate", async () => {
    const [stopping, other] = [await instance(), await instance()];
    expect((await reserve(stopping, "k5", "v1")).admitted).toBe(true);
    await stopping.chargeStopped?.([{ keyId: "k5", period: PERIOD, id: "v1", entry: soFar }]);
    // Within what would have been its note's lease: charged already.
    expect(await other.get("k5", PERIOD)).toMatchObject({ microUsd: 7000, requests: 1 });
    expect(await other.chargeLapsed?.()).toBe(0);
    expect((await stopping.settle({ keyId: "k5", period: PERIOD, id: "v1", entry: real })).applied).toBe(true);
    expect((await other.get("k5", PERIOD)).microUsd).toBe(9000);
  });

  it("a request that settles is charged its real cost only, however late the next reservation", async () => {
    const store = await instance();
    expect((await reserve(store, "k2", "s1")).admitted).toBe(true);
    store.noteRunning?.([{ keyId: "k2", period: PERIOD, id: "s1", entry: soFar }]);
    await noted("k2");
    await store.settle({ keyId: "k2", period: PERIOD, id: "s1", entry: real });
    clock += 10 * RUN_LEASE_MS;
    expect((await reserve(store, "k2", "s2")).spent).toMatchObject({ microUsd: 9000, requests: 1 });
  });
});
