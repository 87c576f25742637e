/**
 * Tokenizing never stalls the process: a count_tokens body of 100 KB of one character (quadratic in js-tiktoken's
 * own merge: more than 60 s) is answered (well under 1 s on an idle machine; printed), and /health, polled all the
 * while, is never held behind the count. A count that held the event loop would hold the poll in flight for about
 * its whole duration; one that yields holds it one slice at most. Times on a machine running other tests vary too
 * much for a tight bound (/health took 118 ms once in CI, for a count of 11 ms on an idle machine), so each poll
 * must answer within half the count's own time, or within 250 ms: the stall this guards against held /health for
 * 360–570 ms behind one count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { type HealthProbe, startHealthProbe } from "./support/health-probe.js";

describe("count_tokens beside other requests", () => {
  let stack: Stack;
  let probe: HealthProbe;
  beforeAll(async () => {
    stack = await startStack();
    // The vocabulary loads on first use, and the first requests of a process run cold code; that one-off cost is not
    // what this measures.
    await count(`warm up ${"abcdefghij".repeat(300)} ${"w".repeat(20_000)} ${"-".repeat(5_000)}`);
    probe = await startHealthProbe(stack.server.url);
  });
  afterAll(async () => {
    probe?.close();
    await stack?.close();
  });

  async function count(text: string): Promise<number> {
    const res = await fetch(`${stack.server.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "claude-4.5-sonnet", messages: [{ role: "user", content: text }] }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { input_tokens: number }).input_tokens;
  }

  for (const [name, text] of [
    ["100 KB of one character", "x".repeat(100_000)],
    ["100 KB of dashes", "-".repeat(100_000)],
    [
      "100 KB of random letters",
      Array.from({ length: 100_000 }, (_, i) => "qwertyuiopasdfghjklzxcvbnm"[(i * 7919) % 26]).join(""),
    ],
  ] as const) {
    it(`counts ${name} while /health is never held behind the count`, async () => {
      await probe.start();
      const started = performance.now();
      const tokens = await count(text);
      const elapsed = performance.now() - started;
      const latencies = await probe.stop();
      const worst = Math.max(...latencies);
      process.stdout.write(
        `reliability: count_tokens ${name}: ${tokens} tokens in ${elapsed.toFixed(0)} ms; /health worst ${worst.toFixed(1)} ms over ${latencies.length} polls\n`,
      );
      expect(tokens).toBeGreaterThan(1_000);
      // A hang guard, not a speed target: the quadratic merge took more than 60 s.
      expect(elapsed).toBeLessThan(20_000);
      expect(worst).toBeLessThan(Math.max(250, elapsed / 2));
    }, 120_000);
  }
});
