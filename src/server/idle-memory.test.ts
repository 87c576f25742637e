import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../util/logger.js";
import { createIdleMemory, heldBytes } from "./idle-memory.js";

describe("idle memory release", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A heap of `heap` bytes, which `collect` may change. */
  function setup(heap: number, collect = vi.fn()) {
    const state = { heap };
    const idle = createIdleMemory({
      logger: silentLogger,
      idleMs: 1_000,
      minIntervalMs: 10_000,
      heapThresholdBytes: 100,
      collect: () => collect(state),
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
