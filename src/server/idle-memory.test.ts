import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../util/logger.js";
import { compactingGc, createIdleMemory, heldBytes, readOldSpace, worthCompacting } from "./idle-memory.js";

describe("idle memory release", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A collect that sets the heap to the next of `heaps` at each compacting collection. */
  function shrinkingTo(heaps: number[]) {
    return vi.fn((state: { heap: number }, compact: boolean) => {
      if (compact) state.heap = heaps.shift() ?? state.heap;
    });
  }

  /** A heap of `heap` bytes, which `collect` may change. */
  function setup(heap: number, collect = vi.fn()) {
    const state = { heap };
    const idle = createIdleMemory({
      logger: silentLogger,
      idleMs: 1_000,
      minIntervalMs: 10_000,
      followUpMs: 2_000,
      heapThresholdBytes: 100,
      collect: (compact: boolean) => collect(state, compact),
      heapBytes: () => state.heap,
      now: () => Date.now(),
    });
    return { idle, collect };
  }

  it("collects once the server has been quiet for idleMs after load, and not while a request runs", async () => {
    const { idle, collect } = setup(500);
    idle.begin();
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(collect).not.toHaveBeenCalled();
    idle.end();
    await vi.advanceTimersByTimeAsync(999);
    expect(collect).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(collect).toHaveBeenCalledTimes(2);
    idle.close();
  });

  it("frees the garbage with the first collection and compacts with the second", async () => {
    const { idle, collect } = setup(500);
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect.mock.calls.map(([, compact]) => compact)).toEqual([false, true]);
    idle.close();
  });

  it("while quiet and still over the threshold, collects again every minIntervalMs, twice at most per busy spell", async () => {
    const { idle, collect } = setup(500);
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(collect).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(collect).toHaveBeenCalledTimes(6);
    // Quiet since and nothing given back: no more until the next busy spell.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(collect).toHaveBeenCalledTimes(6);
    idle.close();
  });

  it("follows up after followUpMs instead while the last collection gave back a quarter or more", async () => {
    // 800 → 400 (half given back) → 300 (a quarter) → 270 (a tenth): follow-ups 2 s, then 2 s after the collections.
    const heaps = [400, 300, 270];
    const { idle, collect } = setup(800, shrinkingTo(heaps));
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(collect).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(collect).toHaveBeenCalledTimes(6);
    // Two follow-ups per busy spell, whatever they give back.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(collect).toHaveBeenCalledTimes(6);
    idle.close();
  });

  it("after a follow-up that gave back little, waits minIntervalMs for the next", async () => {
    // 800 → 400 (half) → 380 (a twentieth): the second follow-up waits the full interval.
    const heaps = [400, 380];
    const { idle, collect } = setup(800, shrinkingTo(heaps));
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(collect).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(collect).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(collect).toHaveBeenCalledTimes(6);
    idle.close();
  });

  it("a request in between puts the next collection back to idleMs of quiet and minIntervalMs since the last", async () => {
    const heaps = [400, 200];
    const { idle, collect } = setup(800, shrinkingTo(heaps));
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
    // Quiet again 1 s later, but the last collection was less than minIntervalMs ago: not before 10 s after it.
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(collect).toHaveBeenCalledTimes(4);
    idle.close();
  });

  it("needs no follow-up once the collection brought it under the threshold", async () => {
    const { idle, collect } = setup(
      500,
      vi.fn((state: { heap: number }) => {
        state.heap = 50;
      }),
    );
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(collect).toHaveBeenCalledTimes(2);
    idle.close();
  });

  it("waits minIntervalMs between collections, and skips a small heap", async () => {
    const { idle, collect } = setup(500);
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
    idle.begin();
    idle.end();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(collect).toHaveBeenCalledTimes(4);
    idle.close();
    const small = setup(50);
    small.idle.begin();
    small.idle.end();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(small.collect).not.toHaveBeenCalled();
    small.idle.close();
  });

  it("counts the memory Buffers hold outside the heap toward the threshold", async () => {
    const threshold = heldBytes() + 32 * 1024 * 1024;
    const run = async (): Promise<number> => {
      const collect = vi.fn();
      const idle = createIdleMemory({ logger: silentLogger, idleMs: 1_000, heapThresholdBytes: threshold, collect });
      idle.begin();
      idle.end();
      await vi.advanceTimersByTimeAsync(1_000);
      idle.close();
      return collect.mock.calls.length;
    };
    expect(await run()).toBe(0);
    // 64 MB outside the heap (the bytes of large request bodies): the heap itself barely grows.
    const held = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(await run()).toBe(2);
    expect(held[0]).toBe(1);
  });
});

describe("compacting collection", () => {
  it("gives back the old-generation pages the survivors of a load were scattered over", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    setFlagsFromString("--no-expose-gc");
    gc();
    const before = readOldSpace();
    // The shape a load leaves: a few objects of each page survive (every 12th here), the rest is garbage.
    const kept: { n: number; text: string; list: number[] }[] = [];
    for (let round = 0; round < 20; round++) {
      const garbage: unknown[] = [];
      for (let i = 0; i < 100_000; i++) {
        const object = { n: i, text: `survivor ${round} ${i}`, list: [i, i + 1] };
        if (i % 12 === 0) kept.push(object);
        else garbage.push(object);
      }
    }
    const collect = compactingGc(gc);
    collect(false);
    collect(true);
    const after = readOldSpace();
    const survivors = after.used - before.used;
    expect(kept.length).toBe(20 * Math.ceil(100_000 / 12));
    expect(survivors).toBeGreaterThan(0);
    // What is committed beyond what was before is close to what survived, not the pages the load spread it over.
    expect(after.committed - before.committed).toBeLessThan(survivors * 1.5 + 4 * 1024 * 1024);
  });

  it("compacts only an old space with room worth giving back, and never when not asked", () => {
    const MB = 1024 * 1024;
    expect(worthCompacting({ committed: 260 * MB, used: 95 * MB })).toBe(true);
    // Compact already (after the soak's first collection: 77 MB committed, 76 used).
    expect(worthCompacting({ committed: 77 * MB, used: 76 * MB })).toBe(false);
    // A quarter free, but under 16 MB.
    expect(worthCompacting({ committed: 40 * MB, used: 28 * MB })).toBe(false);
    // 20 MB free, but under a quarter.
    expect(worthCompacting({ committed: 200 * MB, used: 180 * MB })).toBe(false);
    const plain = vi.fn();
    const fragmented = compactingGc(plain, () => ({ committed: 260 * MB, used: 95 * MB }));
    const compact = compactingGc(plain, () => ({ committed: 77 * MB, used: 76 * MB }));
    fragmented(false);
    compact(true);
    expect(plain).toHaveBeenCalledTimes(2);
  });
});
