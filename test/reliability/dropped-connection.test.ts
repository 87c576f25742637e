/**
 * One dropped upstream connection costs only its own turn. Turns share one HTTP/2 connection to Cursor; when a turn's
 * connection drops (`[[emu:drop 0]]`), every turn on it fails at once. The turns that had not started answering their
 * clients (here: still waiting for their first token, `bootstrapLatencyMs`) are retried on a fresh connection and
 * answered 200; the dropping turn itself, retried once too, drops again and is answered 503.
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
