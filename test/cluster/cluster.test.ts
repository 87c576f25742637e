/**
 * Acceptance of issue 18 with real servers: one redis-server, the standalone emulator, two `cursor-bridge serve`
 * instances on the shared store, HAProxy in round-robin in front. Through the balancer the openai SDK runs a
 * conversation whose every turn calls a client tool: each result is answered by the turn that asked for it (one Run
 * per user turn) although results land on the other instance and are forwarded. Then one instance is killed with
 * SIGKILL and the conversation goes on from the shared checkpoints; then Redis stops for a while: those requests get
 * a 503 naming the store, and once it is back the conversation continues with nothing corrupt or orphaned in it.
 */
import { Redis } from "ioredis";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterAuth } from "../../src/cluster/cluster-auth.js";
import { decodeRecord } from "../../src/stores/redis/conversation-store.js";
import { type Proc, startBalancer, startInstance, startStandaloneEmulator } from "./support/processes.js";
import { missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli", "haproxy");
const API_KEY = "cluster-test-key";
const SECRET = "a-cluster-secret-of-some-length";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look a key up",
    parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  },
};

interface EmulatorStats {
  runs: number;
  turns: Array<{ conversationId: string; action: string; requestBytes: number; getBlobRequests: number }>;
}

describe.skipIf(skip !== undefined)("two instances on one Redis behind HAProxy", () => {
  let redis: RedisServer;
  let emulator: Proc & { url: string };
  let instances: Array<Proc & { url: string; port: number }> = [];
  let balancer: Proc & { url: string };
  let client: OpenAI;
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];

  const stats = async (): Promise<EmulatorStats> =>
    (await (await fetch(`${emulator.url}/emulator/stats`)).json()) as EmulatorStats;
  const forwardedCount = () =>
    instances.reduce(
      (sum, instance) => sum + (instance.output().match(/POST \/internal\/cluster\/turn 200/g) ?? []).length,
      0,
    );

  /** One user turn that calls the tool, and the tool result answered by that same turn. */
  const toolTurn = async (n: number) => {
    messages.push({ role: "user", content: `Turn ${n}: look it up [[emu:tool lookup {"key":"k${n}"}]]` });
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("expected a function tool call");
    expect(JSON.parse(call.function.arguments)).toEqual({ key: `k${n}` });
    messages.push(choice!.message, { role: "tool", tool_call_id: call.id, content: `value-${n}` });
    const second = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(second.choices[0]?.finish_reason).toBe("stop");
    const text = second.choices[0]?.message.content ?? "";
    expect(text).toContain(`lookup returned: value-${n}`);
    messages.push({ role: "assistant", content: text });
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startStandaloneEmulator(API_KEY);
    const options = { emulatorUrl: emulator.url, apiKey: API_KEY, store: redis.url, secret: SECRET };
    instances = await Promise.all([startInstance(options), startInstance(options)]);
    balancer = await startBalancer(instances.map((instance) => instance.port));
    client = new OpenAI({ baseURL: `${balancer.url}/v1`, apiKey: "team", maxRetries: 0 });
  }, 90_000);

  afterAll(async () => {
    await balancer?.stop();
    await Promise.all(instances.map((instance) => instance.stop()));
    await emulator?.stop();
    await redis?.close();
  });

  it("answers every tool result on the turn that asked, across instances; survives kill -9 and a Redis outage", async () => {
    // Both instances up: three tool turns, results forwarded to the instance holding the parked turn.
    for (let n = 1; n <= 3; n += 1) await toolTurn(n);
    expect((await stats()).runs).toBe(3);
    const forwarded = forwardedCount();
    expect(forwarded).toBeGreaterThan(0);
    // One login for both: the first instance exchanged CURSOR_API_KEY, the other uses the shared tokens.
    const exchanged = instances.map((instance) => instance.output().match(/exchanged CURSOR_API_KEY/g)?.length ?? 0);
    expect(exchanged.reduce((a, b) => a + b, 0)).toBe(1);

    // One instance crashes between turns: the next turns go to the survivor and continue from the shared checkpoint.
    const [victim, survivor] = instances;
    if (victim === undefined || survivor === undefined) throw new Error("expected two instances");
    await victim.crash();
    for (let n = 4; n <= 5; n += 1) await toolTurn(n);
    const afterCrash = await stats();
    // Exactly one Run per user turn: no result ever needed a second Run.
    expect(afterCrash.runs).toBe(5);
    expect(new Set(afterCrash.turns.map((turn) => turn.conversationId)).size).toBe(1);
    expect(afterCrash.turns.map((turn) => turn.action)).toEqual(Array(5).fill(afterCrash.turns[0]?.action));
    // Continued, not replayed: a turn after the crash uploads far less than the history the client holds.
    const historyBytes = JSON.stringify(messages).length;
    for (const turn of afterCrash.turns.slice(3)) expect(turn.requestBytes).toBeLessThan(historyBytes / 2);

    // Redis goes away for a while: a clear 503 naming the store, nothing recorded.
    await redis.stop("keep");
    messages.push({ role: "user", content: "Turn 6 while the store is down" });
    const down = await client.chat.completions.create({ model: "auto", messages }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(down).toBeInstanceOf(OpenAI.APIError);
    expect((down as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((down as InstanceType<typeof OpenAI.APIError>).message).toMatch(/shared store redis:\/\/127\.0\.0\.1:\d+/);
    // The code docs/team.md documents for a store outage (not upstream_unavailable: Cursor is fine).
    expect((down as InstanceType<typeof OpenAI.APIError>).code).toBe("store_unavailable");
    expect((await stats()).runs).toBe(5);

    // Back: the instance reconnects by itself and the same request continues the conversation.
    await redis.start();
    let reply = "";
    await expect
      .poll(
        async () => {
          try {
            const answer = await client.chat.completions.create({ model: "auto", messages });
            reply = answer.choices[0]?.message.content ?? "";
            return true;
          } catch {
            return false;
          }
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe(true);
    expect(reply).toBe("You said: Turn 6 while the store is down");
    const final = await stats();
    expect(final.runs).toBe(6);
    expect(new Set(final.turns.map((turn) => turn.conversationId)).size).toBe(1);
    expect(survivor.output()).not.toMatch(/unhandled error/);
    messages.push({ role: "assistant", content: reply });

    // Only instances sharing the secret may hand turns to each other.
    const unsigned = await fetch(`${survivor.url}/internal/cluster/turn`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-cursor-bridge-cluster": "t=1,s=forged" },
      body: "{}",
    });
    expect(unsigned.status).toBe(403);
    // A correctly signed request is accepted once; the same request replayed within its window is refused.
    const body = JSON.stringify({ model: "auto" });
    const signed = createClusterAuth(SECRET).sign(body);
    const send = () =>
      fetch(`${survivor.url}/internal/cluster/turn`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-cursor-bridge-cluster": signed },
        body,
      });
    const first = await send();
    expect(first.status).not.toBe(403);
    await first.arrayBuffer();
    const replayed = await send();
    expect(replayed.status).toBe(403);

    // The instance holding a parked turn dies: the result, sent to another instance, is answered there (one extra
    // Run, logged), still by a turn of the same conversation, continuing from its checkpoint.
    const third = await startInstance({ emulatorUrl: emulator.url, apiKey: API_KEY, store: redis.url, secret: SECRET });
    instances.push(third);
    const direct = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "team", maxRetries: 0 });
    messages.push({ role: "user", content: 'Turn 7 [[emu:tool lookup {"key":"k7"}]]' });
    const parkedReply = await direct(third.url).chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const parkedCall = parkedReply.choices[0]?.message.tool_calls?.[0];
    if (parkedCall?.type !== "function") throw new Error("expected a function tool call");
    await third.crash();
    messages.push(parkedReply.choices[0]!.message, { role: "tool", tool_call_id: parkedCall.id, content: "value-7" });
    const rescued = await direct(survivor.url).chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(rescued.choices[0]?.message.content).toContain("lookup returned: value-7");
    expect(survivor.output()).toMatch(/the instance holding this parked turn is gone/);
    const rescuedStats = await stats();
    expect(rescuedStats.runs).toBe(8);
    expect(new Set(rescuedStats.turns.map((turn) => turn.conversationId)).size).toBe(1);
    // Continued from the checkpoint plus the interrupted turn, not rebuilt: the emulator fetches only that turn's
    // blobs (the turn, its user message, its one tool-call step), never the whole history (a rebuild fetches 25).
    const rescuedTurn = rescuedStats.turns.at(-1);
    expect(rescuedTurn?.action).toBe("resume");
    expect(rescuedTurn?.getBlobRequests).toBe(3);

    // No corrupt or orphaned entries: every key expires by itself, every record decodes and has its blobs, every
    // index entry names a stored conversation.
    const scan = new Redis(redis.url);
    try {
      const keys = await scan.keys("*");
      expect(keys.length).toBeGreaterThan(0);
      // The shared login (one record, encrypted) is the only key meant to outlive idleness.
      expect(keys).toContain("cursor-bridge:credentials");
      expect(await scan.get("cursor-bridge:credentials")).toMatch(/^cbc1\./);
      for (const key of keys) {
        if (key.endsWith(":conv-times") || key.endsWith(":resp-times") || key === "cursor-bridge:credentials") continue;
        expect(await scan.pttl(key), key).toBeGreaterThan(0);
      }
      const records = keys.filter((key) => key.includes(":conv:"));
      expect(records).toHaveLength(1);
      for (const key of records) {
        const decoded = decodeRecord((await scan.getBuffer(key)) ?? Buffer.alloc(0));
        expect(decoded, key).toBeDefined();
        for (const blob of decoded?.meta.blobs ?? []) {
          expect(await scan.exists(key.replace(/conv:.*$/, `blob:${blob}`)), blob).toBe(1);
        }
      }
      for (const key of keys.filter((k) => k.includes(":idx:"))) {
        const id = await scan.get(key);
        expect(keys).toContain(key.replace(/idx:.*$/, `conv:${id}`));
      }
    } finally {
      scan.disconnect();
    }
  }, 120_000);
});
