/**
 * Tokenizing never stalls the process: a count_tokens body of 100 KB of one character (quadratic in js-tiktoken's
 * own merge: more than 60 s) answers within 1 s, and /health, polled all the while, answers each time within 50 ms.
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
    it(`counts ${name} within 1 s while /health stays under 50 ms`, async () => {
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
      expect(elapsed).toBeLessThan(1_000);
      expect(worst).toBeLessThan(50);
    }, 120_000);
  }
});
