/**
 * The first count_tokens of a process loads the o200k_base vocabulary (200,000 tokens to index); it does so a few
 * milliseconds at a time, so /health, polled all the while, is never held behind it (it once waited 360–570 ms).
 * A load that held the event loop would hold the poll in flight for about its whole duration; the bound is half the
 * count's own time, or 250 ms, whichever is more, which leaves room for a machine running other tests.
 * Its own file: the vocabulary is loaded once per process, and this test needs a process that has not counted yet.
 * A count in another door warms the request path first, so what is measured is the vocabulary's load alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { type HealthProbe, startHealthProbe } from "./support/health-probe.js";

describe("the first count_tokens", () => {
  let stack: Stack;
  let probe: HealthProbe;
  beforeAll(async () => {
    stack = await startStack();
    probe = await startHealthProbe(stack.server.url);
    // Cold code of the messages door (parse, validation), without counting: a request it refuses before counting.
    const refused = await count({ model: "claude-4.5-sonnet", messages: "not a list" });
    expect(refused.status).toBe(400);
  });
  afterAll(async () => {
    probe?.close();
    await stack?.close();
  });

  function count(body: unknown): Promise<Response> {
    return fetch(`${stack.server.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
  }

  it("loads the vocabulary while /health is never held behind it", async () => {
    await probe.start();
    const started = performance.now();
    const res = await count({ model: "claude-4.5-sonnet", messages: [{ role: "user", content: "Hello there" }] });
    const elapsed = performance.now() - started;
    // A few more polls after the load, so the probe has surely seen the whole of it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const latencies = await probe.stop();
    const worst = Math.max(...latencies);
    process.stdout.write(
      `reliability: first count_tokens (vocabulary load) ${elapsed.toFixed(0)} ms; /health worst ${worst.toFixed(1)} ms over ${latencies.length} polls\n`,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(latencies.length).toBeGreaterThan(3);
    expect(worst).toBeLessThan(Math.max(250, elapsed / 2));
  }, 120_000);
});
