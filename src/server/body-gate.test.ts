import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import { readJson } from "../surfaces/kit/json-body.js";
import { ProxyError } from "../util/errors.js";
import { admitLargeBodies, createBodyGate, createLanedBodyGate } from "./body-gate.js";
import { limitBody } from "./body-limit.js";

/** Settles pending promise callbacks. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("createBodyGate", () => {
  it("admits within the budget and queues the rest first come, first served", async () => {
    const gate = createBodyGate(10);
    const first = await gate.acquire(6);
    const order: string[] = [];
    const admitted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const second = gate.acquire(6).then(admitted("second"));
    const third = gate.acquire(3).then(admitted("third"));
    await flush();
    // The 3-byte request would fit, but it came after the waiting 6-byte one.
    expect(order).toEqual([]);
    expect(gate.waiting).toBe(2);
    first();
    const releaseSecond = await second;
    const releaseThird = await third;
    expect(order).toEqual(["second", "third"]);
    expect(gate.inUse).toBe(9);
    releaseSecond();
    releaseSecond();
    releaseThird();
    expect(gate.inUse).toBe(0);
  });

  it("admits a waiter over the budget once it has waited maxWaitMs, and counts it", async () => {
    vi.useFakeTimers();
    try {
      const gate = createBodyGate(10, 2_000);
      const holder = await gate.acquire(10);
      let admitted: (() => void) | undefined;
      void gate.acquire(5).then((release) => {
        admitted = release;
      });
      await vi.advanceTimersByTimeAsync(1_999);
      expect(admitted).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(admitted).toBeDefined();
      expect(gate.inUse).toBe(15);
      expect(gate.waiting).toBe(0);
      holder();
      admitted?.();
      expect(gate.inUse).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("admits only one waiter over the budget at a time; the next overdue one goes when it is done", async () => {
    vi.useFakeTimers();
    try {
      const gate = createBodyGate(10, 2_000);
      const holder = await gate.acquire(10);
      const admitted: Array<() => void> = [];
      for (const bytes of [5, 5, 5]) void gate.acquire(bytes).then((release) => admitted.push(release));
      await vi.advanceTimersByTimeAsync(2_000);
      // All three are overdue; one goes over the budget, the memory bound stays budget + one request.
      expect(admitted).toHaveLength(1);
      expect(gate.inUse).toBe(15);
      expect(gate.waiting).toBe(2);
      admitted[0]?.();
      await vi.advanceTimersByTimeAsync(0);
      expect(admitted).toHaveLength(2);
      expect(gate.inUse).toBe(15);
      holder();
      await vi.advanceTimersByTimeAsync(0);
      // The budget freed: the last one fits within it, beside the over-budget one.
      expect(admitted).toHaveLength(3);
      expect(gate.inUse).toBe(10);
      for (const release of admitted.slice(1)) release();
      expect(gate.inUse).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("admits a body larger than the budget when nothing else runs", async () => {
    const gate = createBodyGate(10);
    const release = await gate.acquire(50);
    expect(gate.inUse).toBe(10);
    const next = gate.acquire(1);
    await flush();
    expect(gate.waiting).toBe(1);
    release();
    (await next)();
    expect(gate.inUse).toBe(0);
  });

  it("drops a waiter whose client went away and lets the next one in", async () => {
    const gate = createBodyGate(10);
    const release = await gate.acquire(10);
    const abort = new AbortController();
    const gone = gate.acquire(10, abort.signal);
    const next = gate.acquire(10);
    abort.abort();
    await expect(gone).rejects.toBeInstanceOf(ProxyError);
    expect(gate.waiting).toBe(1);
    release();
    (await next)();
    expect(gate.inUse).toBe(0);
  });
});

describe("createLanedBodyGate", () => {
  it("admits a body under half the budget while larger ones fill theirs, over-budget one included", async () => {
    vi.useFakeTimers();
    try {
      const gate = createLanedBodyGate(10, 2_000);
      const first = await gate.acquire(19);
      let second: (() => void) | undefined;
      void gate.acquire(19).then((release) => {
        second = release;
      });
      await vi.advanceTimersByTimeAsync(2_000);
      // The second large one went over the budget after its wait; that lane's over-budget place is taken.
      expect(second).toBeDefined();
      const small = await gate.acquire(2);
      expect(gate.inUse).toBe(22);
      let third: (() => void) | undefined;
      void gate.acquire(5).then((release) => {
        third = release;
      });
      await vi.advanceTimersByTimeAsync(3_000);
      // Half the budget or more: it waits behind the larger ones in their lane.
      expect(third).toBeUndefined();
      first();
      second?.();
      await vi.advanceTimersByTimeAsync(0);
      expect(third).toBeDefined();
      for (const release of [small, third]) release?.();
      expect(gate.inUse).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("admitLargeBodies", () => {
  function app(budget: number, threshold: number) {
    const gate = createBodyGate(budget);
    const app = new Hono();
    const held: Array<() => void> = [];
    app.use(limitBody(1_000_000, (c) => c.text("too large", 413)));
    app.use(admitLargeBodies(gate, threshold));
    app.post("/hold", async (c) => {
      const body = (await readJson(c)) as { n: number };
      // The handler holds its admission until the test lets it finish.
      await new Promise<void>((resolve) => held.push(resolve));
      return c.json({ n: body.n, cachedBodies: Object.keys(c.req.bodyCache).length });
    });
    const post = (n: number, pad: number, chunked = false) => {
      const body = JSON.stringify({ n, pad: "x".repeat(pad) });
      if (!chunked) {
        return app.request("/hold", { method: "POST", body, headers: { "content-length": String(body.length) } });
      }
      // No declared length: the gate goes by the bytes counted as they arrived.
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(body);
          for (let at = 0; at < bytes.length; at += 16) controller.enqueue(bytes.subarray(at, at + 16));
          controller.close();
        },
      });
      return app.request("/hold", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    };
    return { gate, held, post };
  }

  it("processes large bodies within the budget, one after the other, and answers them all", async () => {
    const { gate, held, post } = app(150, 100);
    const responses = [post(1, 100), post(2, 100), post(3, 100)];
    await expect.poll(() => held.length).toBe(1);
    await flush();
    expect(gate.waiting).toBe(2);
    for (let i = 0; i < 3; i++) {
      await expect.poll(() => held.length).toBe(i + 1);
      held[i]?.();
    }
    const bodies = await Promise.all(responses.map(async (r) => (await r).json()));
    expect(bodies.map((b) => b.n)).toEqual([1, 2, 3]);
    // readJson dropped hono's cached copy of the body text before the handler went on.
    expect(bodies.every((b) => b.cachedBodies === 0)).toBe(true);
    expect(gate.inUse).toBe(0);
  });

  it("counts a chunked body's bytes as they arrive and admits it like a declared one", async () => {
    const { gate, held, post } = app(150, 100);
    const responses = [post(1, 100, true), post(2, 100, true)];
    await expect.poll(() => held.length).toBe(1);
    await flush();
    expect(gate.waiting).toBe(1);
    held[0]?.();
    await expect.poll(() => held.length).toBe(2);
    held[1]?.();
    const bodies = await Promise.all(responses.map(async (r) => (await r).json()));
    expect(bodies.map((b) => b.n)).toEqual([1, 2]);
    expect(gate.inUse).toBe(0);
  });

  it("never holds back small requests", async () => {
    const { gate, held, post } = app(150, 100);
    const large = post(1, 200);
    await expect.poll(() => held.length).toBe(1);
    const small = post(2, 10);
    await expect.poll(() => held.length).toBe(2);
    expect(gate.inUse).toBe(150);
    for (const release of held) release();
    expect((await large).status).toBe(200);
    expect((await small).status).toBe(200);
  });
});
