import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRefreshingTokenSource } from "../../src/auth/index.js";
import { deriveKey } from "../../src/cluster/cluster-auth.js";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisConversationIndex } from "../../src/stores/redis/conversation-index.js";
import { createRedisConversationStore } from "../../src/stores/redis/conversation-store.js";
import {
  createRedisCredentialStore,
  openCredentials,
  sealCredentials,
} from "../../src/stores/redis/credential-store.js";
import { createRedisLock } from "../../src/stores/redis/lock.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import { ProxyError } from "../../src/util/errors.js";
import { createCliHarness } from "../cli/harness.js";
import { sampleRecord } from "../support/conversation-record.js";
import { freePort, missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");

describe.skipIf(skip !== undefined)("Redis stores", () => {
  let server: RedisServer;
  let client: StoreClient;
  let now = 1_000_000;
  beforeAll(async () => {
    server = await startRedisServer();
    client = await connectStore({ url: server.url, namespace: "test", timeoutMs: 500 });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });
  beforeEach(async () => {
    await client.redis.flushdb();
    now = Date.now();
  });

  const keys = async () => (await client.redis.keys("*")).sort();

  // What every store promises is checked by test/stores/contract.test.ts; here is what only Redis does.

  it("index: each entry expires by itself (Redis key TTL)", async () => {
    const index = createRedisConversationIndex({ client, ttlMs: 60_000 });
    await index.remember("k1", "c1");
    const ttl = await client.redis.pttl("cursor-bridge:test:idx:k1");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("conversations: blobs are shared between conversations and every key carries a TTL", async () => {
    const store = createRedisConversationStore({ client, now: () => now });
    await store.save(sampleRecord("conv-1", now));
    await store.save(sampleRecord("conv-2", now));
    const blobKeys = (await keys()).filter((key) => key.includes(":blob:"));
    // conv-1 and conv-2 have identical content: three blobs stored once, the orphan never.
    expect(blobKeys).toHaveLength(3);
    for (const key of await keys()) expect(await client.redis.pttl(key)).toBeGreaterThan(0);
    // Deleting one conversation leaves the blobs the other still needs.
    await store.delete("conv-1");
    expect((await store.load("conv-2"))?.blobs.size).toBe(3);
  });

  it("conversations: a record whose blobs expired loads without them (the turn then rebuilds)", async () => {
    const store = createRedisConversationStore({ client, now: () => now });
    await store.save(sampleRecord("conv-1", now));
    const blobKeys = (await keys()).filter((key) => key.includes(":blob:"));
    await client.redis.del(blobKeys[0] ?? "");
    expect((await store.load("conv-1"))?.blobs.size).toBe(2);
  });

  it("Redis down: a fast 503 naming the store; back by itself when Redis returns", async () => {
    const own = await connectStore({ url: server.url, namespace: "test", timeoutMs: 500 });
    try {
      const index = createRedisConversationIndex({ client: own });
      await index.remember("k", "c");
      await server.stop();
      const error = await index.lookup("k").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ProxyError);
      expect((error as ProxyError).status).toBe(503);
      expect((error as ProxyError).detail).toBe("store_unavailable");
      expect((error as ProxyError).message).toContain(`redis://127.0.0.1:${server.port}`);
      await server.start();
      await expect.poll(() => own.redis.status, { timeout: 10_000 }).toBe("ready");
      // The shared client reconnects on its own schedule; the next test's flushdb needs it (no offline queue).
      await expect.poll(() => client.redis.status, { timeout: 10_000 }).toBe("ready");
      await index.remember("k", "c2");
      expect(await index.lookup("k")).toBe("c2");
    } finally {
      await own.close();
    }
  });

  it("Redis connected but not answering (stopped, a partition): 503 and /health say so; back when it answers", async () => {
    const own = await connectStore({ url: server.url, namespace: "test", timeoutMs: 500 });
    const pid = Number(/process_id:(\d+)/.exec(await own.redis.info("server"))?.[1]);
    expect(pid).toBeGreaterThan(0);
    const index = createRedisConversationIndex({ client: own });
    const failure = () =>
      index.lookup("k").then(
        () => undefined,
        (e: unknown) => e as ProxyError,
      );
    try {
      await index.remember("k", "c");
      process.kill(pid, "SIGSTOP");
      // The connection stays open: the first call waits its timeout, then the store is pinged and found silent.
      expect((await failure())?.detail).toBe("store_unavailable");
      await expect.poll(() => own.health(), { timeout: 10_000 }).toMatch(/does not answer/);
      const fast = await failure();
      expect(fast?.status).toBe(503);
      expect(fast?.message).toContain("does not answer");
      process.kill(pid, "SIGCONT");
      await expect.poll(() => own.health(), { timeout: 10_000 }).toBeUndefined();
      expect(await index.lookup("k")).toBe("c");
    } finally {
      process.kill(pid, "SIGCONT");
      await own.close();
    }
  });

  it("doctor checks the store: reachable and writable, or a failure with a fix", async () => {
    const harness = await createCliHarness();
    try {
      const env = { CURSOR_BRIDGE_STORE: server.url, CURSOR_BRIDGE_CLUSTER_SECRET: "a-cluster-secret-of-some-length" };
      const ok = JSON.parse((await harness.run(["doctor", "--json"], { env })).out) as {
        checks: Array<{ id: string; status: string; detail: string; fix?: string }>;
      };
      expect(ok.checks.find((check) => check.id === "store")).toMatchObject({
        status: "ok",
        detail: expect.stringMatching(/^redis:\/\/127\.0\.0\.1:\d+\/0 \(Redis [\d.]+\), \d+ instance\(s\) running$/),
      });
      const dead = `redis://127.0.0.1:${await freePort()}/0`;
      const down = JSON.parse(
        (await harness.run(["doctor", "--json"], { env: { ...env, CURSOR_BRIDGE_STORE: dead } })).out,
      ) as { checks: Array<{ id: string; status: string; fix?: string }> };
      expect(down.checks.find((check) => check.id === "store")).toMatchObject({
        status: "fail",
        fix: expect.stringContaining("Start Redis"),
      });
    } finally {
      await harness.close();
    }
  });

  it("shared login: encrypted at rest; concurrent refreshes on two instances spend each refresh token once", async () => {
    const jwt = (exp: number, n: number) =>
      `e30.${Buffer.from(JSON.stringify({ exp, sub: "auth0|user", n })).toString("base64url")}.sig`;
    const secret = "a-cluster-secret-of-some-length";
    const store = createRedisCredentialStore(client, deriveKey(secret, "credentials at rest"));
    const nowSeconds = Math.floor(Date.now() / 1000);
    await store.save({ accessToken: jwt(nowSeconds + 60, 0), refreshToken: "refresh-0", source: "login" });
    const sealed = (await client.redis.get("cursor-bridge:test:credentials")) ?? "";
    expect(sealed).not.toContain("refresh-0");
    expect(openCredentials(deriveKey(secret, "credentials at rest"), sealed)).toContain("refresh-0");
    expect(openCredentials(deriveKey("another secret!!!!", "credentials at rest"), sealed)).toBeUndefined();
    expect(openCredentials(deriveKey(secret, "x"), sealCredentials(deriveKey(secret, "x"), "plain"))).toBe("plain");

    // Cursor rotates the refresh token on every exchange and rejects a spent one.
    let valid = "refresh-0";
    let exchanges = 0;
    const exchange = async (refreshToken: string) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (refreshToken !== valid) throw new ProxyError("unauthenticated", "refresh token already used");
      exchanges += 1;
      valid = `refresh-${exchanges}`;
      return { accessToken: jwt(nowSeconds + 3600, exchanges), refreshToken: valid };
    };
    // Two instances, each with its own view of the shared record, both finding the token about to expire.
    const instances = [0, 1].map(() =>
      createRefreshingTokenSource({
        store: createRedisCredentialStore(client, deriveKey(secret, "credentials at rest")),
        exchange,
        refreshLock: createRedisLock(client, "credentials"),
      }),
    );
    const tokens = await Promise.all(instances.map((source) => source.getAccessToken()));
    expect(exchanges).toBe(1);
    expect(tokens[0]).toBe(tokens[1]);
    expect((await store.load())?.refreshToken).toBe("refresh-1");
  });

  it("spend: a hash has no expiry (never evicted); a later settle removes it once its period is long over", async () => {
    let clock = Date.UTC(2026, 10, 1);
    const spend = createRedisSpendStore(client, { now: () => clock });
    const entry = { microUsd: 7, requests: 1, inputTokens: 1, outputTokens: 1, cachedTokens: 0, reasoningTokens: 0 };
    await spend.settle({ keyId: "k", period: "day:2026-11-01", id: "a", entry });
    await spend.add("k", "month:2026-11", entry);
    const day = `${client.prefix}spend:day:2026-11-01:k`;
    expect(await client.redis.pttl(day)).toBe(-1);
    expect(await client.redis.pttl(`${client.prefix}spend:month:2026-11:k`)).toBe(-1);
    // Seven days on the day's spend is still kept (8 days after its last settle)...
    clock += 7 * 86_400_000;
    await spend.settle({ keyId: "other", period: "day:2026-11-08", id: "b", entry });
    expect((await spend.get("k", "day:2026-11-01")).microUsd).toBe(7);
    // ...nine days on, the next settle of anyone removes it; the month's stays.
    clock += 2 * 86_400_000;
    await spend.settle({ keyId: "other", period: "day:2026-11-10", id: "c", entry });
    expect(await client.redis.exists(day)).toBe(0);
    expect((await spend.get("k", "month:2026-11")).microUsd).toBe(7);
    expect(await client.redis.zscore(`${client.prefix}spend:periods`, day)).toBeNull();
  });
});
