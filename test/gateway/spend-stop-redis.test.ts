/**
 * A stop of an instance on a shared Redis store (Debian's redis-server) while a request still runs: the limits'
 * close charges what that request has cost so far at once, before it returns (serve closes the store's connection
 * right after it), instead of leaving a note whose lease runs out later; the request's settle that still comes
 * replaces that estimate, once. Without redis-server this file is skipped with a printed reason, unless CI=true.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { createRedisLimitCounters } from "../../src/stores/redis/limit-counters.js";
import { createRedisSpendStore } from "../../src/stores/redis/spend-store.js";
import { silentLogger } from "../../src/util/logger.js";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { startStack } from "../support/stack.js";
import { type KeyTable, testLimits } from "./support.js";

const skip = missingBinaries("redis-server", "redis-cli");

describe.skipIf(skip !== undefined)("a stop with a request still running, on Redis", () => {
  let redis: RedisServer;
  const clients: StoreClient[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await redis?.close();
  });

  it("charges its cost so far before the close returns, once", async () => {
    const connect = async () => {
      const client = await connectStore({ url: redis.url, namespace: "stop-test", timeoutMs: 2000 });
      clients.push(client);
      return client;
    };
    const [client, reader] = [await connect(), await connect()];
    const keys: KeyTable = new Map([["team-stop", {}]]);
    const limits = testLimits(keys, {
      counters: createRedisLimitCounters(client),
      spend: createRedisSpendStore(client),
      logger: silentLogger,
    });
    const stack = await startStack({ limits: limits.middleware });
    const period = limits.periodOf({}, limits.now()).id;
    const spent = () => createRedisSpendStore(reader).get("id-team-stop", period);
    const request = new AbortController();
    try {
      const answer = await fetch(`${stack.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer team-stop" },
        body: JSON.stringify({
          model: "auto",
          stream: true,
          messages: [{ role: "user", content: "Tell me a long story [[emu:stall 5]]" }],
        }),
        signal: request.signal,
      });
      expect(answer.status).toBe(200);
      const body = (answer.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      while (!text.includes('"content":"')) text += Buffer.from((await body.read()).value ?? []).toString();
      // The request runs (stalled): nothing is charged yet.
      expect((await spent()).requests).toBe(0);
      await limits.close();
      const charged = await spent();
      expect(charged.requests).toBe(1);
      expect(charged.microUsd).toBeGreaterThan(0);
      // Its settle, when the answer ends after all, replaces the estimate: still one request.
      request.abort();
      await stack.close();
      const settled = async () => {
        const [marker] = await reader.redis.keys(`${reader.prefix}settled:*`);
        return marker === undefined ? undefined : reader.redis.get(marker);
      };
      // The marker the stop's charge left ("lapsed:…") becomes a settle's once the settle has come.
      await expect.poll(settled).toBe("1");
      expect((await spent()).requests).toBe(1);
    } finally {
      request.abort();
      await stack.close().catch(() => undefined);
    }
  });
});
