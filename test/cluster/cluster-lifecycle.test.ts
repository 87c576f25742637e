/**
 * The lifecycle of turns that live on another instance, with real processes: one redis-server, the standalone
 * emulator and two `cursor-bridge serve` instances on the shared store. A tool result sent to instance B for a turn
 * parked on A is forwarded to A; when A stops (SIGTERM) while that turn runs, the client of B gets the shutting-down
 * error a turn of B's own gets at its drain (the chat door's `server_shutting_down` error chunk), not a dropped stream.
 * A request to B that moves on past a turn parked on A (a new user message instead of the results) has A close that
 * turn at once, as a local move-on does, and continues the conversation from its checkpoint; so does a later request
 * whose history holds A's call further back. A forwarded turn whose
 * first event is slow to come stays with the instance holding it (no second Run on B).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Proc, startInstance, startStandaloneEmulator } from "./support/processes.js";
import { missingBinaries, type RedisServer, startRedisServer } from "./support/redis-server.js";

const skip = missingBinaries("redis-server", "redis-cli");
const API_KEY = "cluster-lifecycle-key";
const SECRET = "a-cluster-secret-of-some-length";
const lookup = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { key: { type: "string" } } } },
};

type Instance = Proc & { url: string; port: number };

/** Resolves when `check` holds (checked every 50 ms; the test's own timeout bounds the wait). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}

async function chat(url: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "auto", tools: [lookup], ...body }),
  });
}

/** A streamed answer: its text so far, and the whole text once it is over ("<cut>" when it broke). */
function stream(response: Promise<Response>) {
  let text = "";
  const done = (async () => {
    const answer = await response;
    expect(answer.status).toBe(200);
    try {
      const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        text += Buffer.from(read.value).toString();
      }
    } catch {
      text += "<cut>";
    }
    return text;
  })();
  return { done, text: () => text };
}

/** The `data:` payloads of an SSE text, parsed (`[DONE]` left out). */
function payloads(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** Parks a turn on `owner`: the first message and the assistant message holding its call. */
async function park(owner: Instance, content: string) {
  const first = { role: "user", content };
  const answer = await chat(owner.url, { messages: [first] });
  expect(answer.status).toBe(200);
  const body = (await answer.json()) as {
    choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ id: string }> } }>;
  };
  const choice = body.choices[0];
  expect(choice?.finish_reason).toBe("tool_calls");
  const call = choice?.message.tool_calls[0];
  if (call === undefined) throw new Error("expected a tool call");
  return { first, assistant: choice?.message, call };
}

describe.skipIf(skip !== undefined)("turns on another instance", () => {
  let redis: RedisServer;
  let emulator: Proc & { url: string };
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    redis = await startRedisServer();
    emulator = await startStandaloneEmulator(API_KEY);
    const options = { emulatorUrl: emulator.url, apiKey: API_KEY, store: redis.url, secret: SECRET };
    [a, b] = await Promise.all([
      startInstance({ ...options, args: ["--drain-timeout-ms", "1000"] }),
      startInstance(options),
    ]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await emulator?.stop();
    await redis?.close();
  });

  it("names the shared login on every instance's /status.json (B's config directory holds none)", async () => {
    const account = async (instance: Instance) =>
      ((await (await fetch(`${instance.url}/status.json`)).json()) as { upstream: { account: unknown } }).upstream
        .account;
    // Read again after the once-a-second check of the stored login (cli/upstream.ts storedLoginIdentity) has run.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const seen = await account(a);
    expect(typeof seen).toBe("string");
    expect(await account(b)).toBe(seen);
  });

  it("a turn parked on another instance is closed there when the conversation moves on without its results", async () => {
    const parkedOn = async (instance: Instance) =>
      ((await (await fetch(`${instance.url}/health`)).json()) as { parked_turns: number }).parked_turns;
    // The user interrupting the calls (no result), then a client that answered them before its next message.
    for (const next of [
      (_call: { id: string }) => [{ role: "user", content: "Never mind. [[emu:recall]]" }],
      (call: { id: string }) => [
        { role: "tool", tool_call_id: call.id, content: "value" },
        { role: "user", content: "And now? [[emu:recall]]" },
      ],
    ]) {
      const { first, assistant, call } = await park(a, 'MOVED-ON Look it up [[emu:tool lookup {"key":"k"}]]');
      expect(await parkedOn(a)).toBe(1);
      const reply = await chat(b.url, { messages: [first, assistant, ...next(call)] });
      expect(reply.status).toBe(200);
      const body = (await reply.json()) as { choices: Array<{ message: { content: string } }> };
      // Continued from the checkpoint of the conversation (Cursor's state holds the first message), on B.
      expect(body.choices[0]?.message.content).toContain("MOVED-ON");
      // A closes it once told (B does not wait for that before its own Run).
      await expect.poll(() => parkedOn(a), { timeout: 20_000, interval: 100 }).toBe(0);
      expect(a.output()).toContain("closing a parked turn: the conversation moved on without its results");
    }
  }, 120_000);

  it("a turn parked on another instance on an earlier step's calls is closed there at the next new message", async () => {
    const parkedOn = async (instance: Instance) =>
      ((await (await fetch(`${instance.url}/health`)).json()) as { parked_turns: number }).parked_turns;
    const { first, assistant } = await park(a, 'EARLIER Look it up [[emu:tool lookup {"key":"k"}]]');
    expect(await parkedOn(a)).toBe(1);
    // The move-on past A's call was answered without A being told (a release that did not get through: A busy, a
    // network blip), and an answer without calls came after it: the latest step holds no call of A's.
    const reply = await chat(b.url, {
      messages: [
        first,
        assistant,
        { role: "user", content: "Never mind." },
        { role: "assistant", content: "Fine." },
        { role: "user", content: "And now? [[emu:recall]]" },
      ],
    });
    expect(reply.status).toBe(200);
    // A closes it when told, as a local move-on closes a turn parked on any call of the history.
    await expect.poll(() => parkedOn(a), { timeout: 20_000, interval: 100 }).toBe(0);
  }, 120_000);

  it("a forwarded turn whose first event is slow stays with the instance holding it", async () => {
    const runs = async () => ((await (await fetch(`${emulator.url}/emulator/stats`)).json()) as { runs: number }).runs;
    // The answer to the result makes no progress at all: its first event never comes.
    const { first, assistant, call } = await park(a, 'Slow [[emu:tool lookup {"key":"k"}]] [[emu:stall 3]]');
    const before = await runs();
    const client = new AbortController();
    let ended = false;
    const answer = fetch(`${b.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        tools: [lookup],
        stream: true,
        messages: [first, assistant, { role: "tool", tool_call_id: call.id, content: "value" }],
      }),
      signal: client.signal,
    })
      .then(
        (response) => response.arrayBuffer(),
        () => undefined,
      )
      .finally(() => {
        ended = true;
      });
    // Twice the time B gives a connection to answer before it counts the instance holding the turn as gone: B must
    // still be waiting for A's turn, not running it again from the checkpoint, nor have given up on it.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect(ended, b.output()).toBe(false);
    expect(b.output()).not.toContain("the instance holding this parked turn is gone");
    expect(b.output()).not.toContain("could not reach the instance holding the turn");
    expect(await runs()).toBe(before);
    client.abort();
    await answer;
  }, 120_000);

  it("a forwarded turn still running when its instance stops ends with the shutting-down error", async () => {
    // The answer to the result stalls before its end: it is still running when A's drain time is up.
    const { first, assistant, call } = await park(a, 'Look it up [[emu:tool lookup {"key":"k"}]] [[emu:stall 40]]');
    const answer = stream(
      chat(b.url, {
        stream: true,
        messages: [first, assistant, { role: "tool", tool_call_id: call.id, content: "value" }],
      }),
    );
    await until(() => answer.text().includes('"content"'));
    a.child.kill("SIGTERM");
    const text = await answer.done;
    expect(text).not.toContain("<cut>");
    expect(payloads(text).at(-1)).toMatchObject({
      error: { type: "server_error", code: "server_shutting_down", message: expect.stringMatching(/shutting down/) },
    });
    await until(() => a.child.exitCode !== null);
    expect(a.child.exitCode, a.output()).toBe(0);
  }, 120_000);
});
