import { afterEach, describe, expect, it, vi } from "vitest";
import type { LimitCounters, SpendStore } from "../../stores/types.js";
import { silentLogger } from "../../util/logger.js";
import { createLeaseRenewer } from "./leases.js";

describe("lease renewer", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("renews what is held every renewMs, nothing once released, and its timer stops when nothing is held", async () => {
    vi.useFakeTimers();
    const renewed: string[][] = [];
    const counters = { renew: async (_key: string, ids: string[]) => void renewed.push([...ids]) };
    const spend = { renew: async () => {} };
    const leases = createLeaseRenewer({
      counters: counters as unknown as LimitCounters,
      spend: spend as unknown as SpendStore,
      logger: silentLogger,
      now: () => Date.now(),
      renewMs: 100,
    });
    leases.hold("a", "k", "month:2026-11");
    leases.hold("b", "k", "month:2026-11");
    await vi.advanceTimersByTimeAsync(100);
    expect(renewed).toEqual([["a", "b"]]);
    leases.release("a");
    await vi.advanceTimersByTimeAsync(100);
    expect(renewed).toEqual([["a", "b"], ["b"]]);
    leases.release("b");
    await vi.advanceTimersByTimeAsync(300);
    expect(renewed).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
    leases.hold("c", "k", "month:2026-11");
    await vi.advanceTimersByTimeAsync(100);
    expect(renewed.at(-1)).toEqual(["c"]);
    leases.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
