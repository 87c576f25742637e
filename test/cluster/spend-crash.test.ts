/**
 * The spend of a request whose instance crashed, with real processes: one redis-server, the standalone emulator and
 * two `cursor-bridge serve` instances on the shared store. Instance A runs a streamed request of a virtual key and is
 * killed (SIGKILL) mid-answer, after it noted the request's cost so far; instance B charges that note once its lease
 * has run out, by itself: the key's spend shown by B's admin API (and so its budget and /metrics) is right without
 * that key sending another request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStore, type StoreClient } from "../../src/stores/redis/client.js";
import { type Proc, startInstance, startStandaloneEmulator } from "./support/processes.js";
import { missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");
const API_KEY = "spend-crash-key";
const SECRET = "a-cluster-secret-of-some-length";
const ADMIN = "admin-key-of-the-crash-test-0123";

type Instance = Proc & { url: string; port: number };

const admin = (instance: Instance, path: string, body?: unknown) =>
  fetch(`${instance.url}/admin${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe.skipIf(skip !== undefined)("a request whose instance crashed", () => {
  let redis: RedisServer;
  let store: StoreClient;
  let emulator: Proc & { url: string };
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    redis = await startRedisServer();
    store = await connectStore({ url: redis.url });
    emulator = await startStandaloneEmulator(API_KEY);
    const options = { emulatorUrl: emulator.url, apiKey: API_KEY, store: redis.url, secret: SECRET };
    [a, b] = await Promise.all([
      startInstance({ ...options, args: ["--admin-key", ADMIN] }),
      startInstance({ ...options, args: ["--admin-key", ADMIN] }),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await emulator?.stop();
    await store?.close();
    await redis?.close();
  });

  it("is charged by the surviving instance, without another request of its key", async () => {
    const created = await admin(a, "/keys", { name: "crashy", budget: "10/month" });
    expect(created.status, await created.clone().text()).toBe(201);
    const { key } = (await created.json()) as { key: string };
    const spentOnB = async () => {
      const view = (await (await admin(b, "/keys/crashy")).json()) as {
        usage: { requests: number; spendUsd: number } | null;
      };
      return view.usage;
    };
    const answer = await fetch(`${a.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model: "auto",
        stream: true,
        messages: [{ role: "user", content: "Tell me a long story [[emu:stall 5]]" }],
      }),
    });
    expect(answer.status).toBe(200);
    const body = (answer.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes('"content":"')) text += Buffer.from((await body.read()).value ?? []).toString();
    // A notes the running request's cost (every 2 s); then it dies without settling it.
    const runs = async () => {
      const keys = await store.redis.keys("*spend:*:run");
      const lengths = await Promise.all(keys.map((name) => store.redis.hlen(name)));
      return lengths.reduce((sum, length) => sum + length, 0);
    };
    await expect.poll(runs, { timeout: 20_000, interval: 200 }).toBe(1);
    expect((await spentOnB())?.requests).toBe(0);
    await a.crash();
    await body.cancel().catch(() => undefined);
    // The note's lease (30 s), then B's next sweep: charged, once.
    await expect.poll(async () => (await spentOnB())?.requests, { timeout: 90_000, interval: 500 }).toBe(1);
    expect((await spentOnB())?.spendUsd).toBeGreaterThan(0);
    expect(await runs()).toBe(0);
    expect(b.output()).toContain("charged the running requests of an instance that stopped noting them");
  }, 150_000);
});
