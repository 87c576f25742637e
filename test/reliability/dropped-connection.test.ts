/**
 * One dropped upstream connection costs only its own turn. Turns share an HTTP/2 connection to Cursor; when a turn's
 * connection drops, every turn on it fails at once. The turns whose clients have received nothing yet are retried on
 * a fresh connection and answered 200: those still waiting for their first token (`bootstrapLatencyMs`), and
 * non-streaming ones whose answer had begun. The dropping turn itself is answered 503 when it had not streamed, and
 * ends its stream with an error frame when it had.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const FIRST_TOKEN_MS = 2_000;

describe("a dropped upstream connection", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ transport: "http2", emulator: { bootstrapLatencyMs: FIRST_TOKEN_MS } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const chat = async (content: string) => {
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "auto", messages: [{ role: "user", content }] }),
    });
    const body = (await res.json()) as { choices?: Array<{ message: { content: string } }>; error?: { code: string } };
    return { status: res.status, body };
  };

  it("leaves the concurrent turns that had not started streaming answered 200", async () => {
    // The dropping turn starts first; the others start while it waits for its first token, and are still waiting
    // for theirs when its connection (theirs too) drops.
    const dropper = chat("[[emu:drop 0]] goes down");
    await new Promise((resolve) => setTimeout(resolve, FIRST_TOKEN_MS / 2));
    const others = await Promise.all(Array.from({ length: 5 }, (_, i) => chat(`healthy turn ${i}`)));
    const dropped = await dropper;
    const statuses = others.map((answer) => answer.status);
    process.stdout.write(
      `reliability: dropped connection: dropping turn → ${dropped.status}; concurrent turns → ${statuses.join(" ")}\n`,
    );
    for (const [i, answer] of others.entries()) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.choices?.[0]?.message.content).toContain(`healthy turn ${i}`);
    }
    expect(dropped.status).toBe(503);
    expect(dropped.body.error?.code).toBe("upstream_unavailable");
  }, 60_000);
});

describe("a connection dropped after output began", () => {
  let stack: Stack;
  const lines: string[] = [];
  beforeAll(async () => {
    stack = await startStack({ transport: "http2", logLines: lines });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const words = Array.from({ length: 50 }, (_, i) => `w${i}`).join(" ");

  it("answers five non-streaming turns 200 while a sixth, streaming turn's connection drops after its first tokens", async () => {
    // Five answers paced at 20 tokens a second (about 3 s each), all on the connection the sixth turn will drop.
    const answers = Array.from({ length: 5 }, async (_, i) => {
      const res = await fetch(`${stack.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "auto",
          messages: [{ role: "user", content: `[[emu:rate 20]] healthy turn ${i} ${words}` }],
        }),
      });
      const body = (await res.json()) as { choices?: Array<{ message: { content: string } }> };
      return { status: res.status, content: body.choices?.[0]?.message.content ?? JSON.stringify(body) };
    });
    await expect.poll(() => stack.emulator.stats().runStreams, { timeout: 20_000 }).toBe(5);
    // Their output has begun (nothing of it has reached their clients: they answer in one piece).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        stream: true,
        messages: [{ role: "user", content: `[[emu:drop 5]] ${words}` }],
      }),
    });
    const stream = await res.text();
    const done = await Promise.all(answers);
    process.stdout.write(
      `reliability: dropped after output: streaming turn → ${res.status} + error frame; ` +
        `non-streaming turns → ${done.map((answer) => answer.status).join(" ")}\n`,
    );
    // The streaming turn had sent its first tokens: it ends with a clean error frame and is not replayed.
    expect(res.status).toBe(200);
    expect(stream).toContain(`"delta":{"content":"said: "}`);
    expect(stream).toContain('"code":"upstream_unavailable"');
    for (const [i, answer] of done.entries()) {
      expect(answer.status, answer.content).toBe(200);
      expect(answer.content).toBe(`You said: healthy turn ${i} ${words}`);
    }
    // Each of the five was retried once, after its output had begun; the streaming turn was not.
    const retries = lines.filter((line) => line.includes("retrying on a fresh connection"));
    expect(retries).toHaveLength(5);
    expect(retries.every((line) => line.includes("afterOutput=true"))).toBe(true);
    expect(stack.emulator.stats().runStreams).toBe(11);
  }, 90_000);
});
