/** Store contract: the gateway's {@link LimitCounters} (rpm / tpm / max-parallel windows) and {@link SpendStore}. */
import { describe, expect, it } from "vitest";
import type {
  AdmitInput,
  LimitCounters,
  PendingSettle,
  SettleQueue,
  SpendStore,
  SpendTotals,
} from "../../../src/stores/types.js";
import type { Implementation } from "./implementation.js";

const T0 = 1_800_000_000_000;
const WINDOW = 60_000;
let slots = 0;
const input = (overrides: Partial<AdmitInput>): AdmitInput => {
  slots += 1;
  return {
    keyId: "k",
    slotId: `slot-${slots}`,
    now: T0,
    windowMs: WINDOW,
    rpm: 0,
    tpm: 0,
    maxParallel: 0,
    leaseMs: 900_000,
    ...overrides,
  };
};

/** Cases of {@link LimitCounters}. */
export function limitCountersContract(impl: Implementation<LimitCounters>): void {
  describe(`LimitCounters contract: ${impl.name}`, () => {
    it("rpm: admits rpm requests in the window, refuses the next without counting it, admits again once one left", async () => {
      const counters = await impl.open({});
      expect(await counters.admit(input({ rpm: 2, now: T0 }))).toMatchObject({ requestCount: 1, newestRequestAt: T0 });
      expect(await counters.admit(input({ rpm: 2, now: T0 + 10 }))).toMatchObject({
        requestCount: 2,
        newestRequestAt: T0 + 10,
      });
      const refused = await counters.admit(input({ rpm: 2, now: T0 + 20 }));
      expect(refused.refused).toBe("rpm");
      // Nothing counted; the oldest of the two frees the place.
      expect(refused).toMatchObject({ requestCount: 2, newestRequestAt: T0 + 10, freeingRequestAt: T0 });
      const later = await counters.admit(input({ rpm: 2, now: T0 + WINDOW + 1 }));
      expect(later.refused).toBeUndefined();
      expect(later).toMatchObject({ requestCount: 2, newestRequestAt: T0 + WINDOW + 1 });
    });

    it("tpm: settled tokens count for the window; at the limit the next request is refused", async () => {
      const counters = await impl.open({});
      const first = input({ tpm: 100 });
      expect((await counters.admit(first)).refused).toBeUndefined();
      await counters.settle("k", first.slotId, 60, T0 + 5, WINDOW);
      const second = input({ tpm: 100, now: T0 + 6 });
      const state = await counters.admit(second);
      expect(state.refused).toBeUndefined();
      expect(state).toMatchObject({ tokensUsed: 60, newestTokensAt: T0 + 5 });
      await counters.settle("k", second.slotId, 40, T0 + 7, WINDOW);
      const refused = await counters.admit(input({ tpm: 100, now: T0 + 8 }));
      expect(refused).toMatchObject({
        refused: "tpm",
        tokensUsed: 100,
        newestTokensAt: T0 + 7,
        freeingTokensAt: T0 + 5,
      });
      expect((await counters.admit(input({ tpm: 100, now: T0 + 5 + WINDOW + 1 }))).refused).toBeUndefined();
    });

    it("max-parallel: slots are held until settled, and a slot whose lease ran out frees itself", async () => {
      const counters = await impl.open({});
      const first = input({ maxParallel: 1, leaseMs: 1000 });
      expect((await counters.admit(first)).inFlight).toBe(1);
      expect((await counters.admit(input({ maxParallel: 1, now: T0 + 1 }))).refused).toBe("parallel");
      await counters.settle("k", first.slotId, 0, T0 + 2, WINDOW);
      const second = input({ maxParallel: 1, now: T0 + 3, leaseMs: 1000 });
      expect((await counters.admit(second)).refused).toBeUndefined();
      expect((await counters.admit(input({ maxParallel: 1, now: T0 + 1004 }))).refused).toBeUndefined();
    });

    it("renew: a held slot's lease is extended; a freed or expired slot stays free", async () => {
      const counters = await impl.open({});
      const held = input({ maxParallel: 1, leaseMs: 1000 });
      expect((await counters.admit(held)).refused).toBeUndefined();
      await counters.renew("k", [held.slotId], T0 + 900, 1000);
      // Past the first lease, inside the renewed one: still held.
      expect((await counters.admit(input({ maxParallel: 1, now: T0 + 1500 }))).refused).toBe("parallel");
      // Not renewed again: free once the renewed lease is over.
      const next = input({ maxParallel: 1, now: T0 + 1901, leaseMs: 1000 });
      expect((await counters.admit(next)).refused).toBeUndefined();
      await counters.settle("k", next.slotId, 0, T0 + 1902, WINDOW);
      await counters.renew("k", [next.slotId, held.slotId], T0 + 1903, 1000);
      expect((await counters.admit(input({ maxParallel: 1, now: T0 + 1904 }))).refused).toBeUndefined();
    });

    it("settle is idempotent: settling a slot twice counts its tokens once", async () => {
      const counters = await impl.open({});
      const first = input({ tpm: 100 });
      await counters.admit(first);
      await counters.settle("k", first.slotId, 60, T0 + 5, WINDOW);
      await counters.settle("k", first.slotId, 60, T0 + 5, WINDOW);
      expect(await counters.admit(input({ tpm: 100, now: T0 + 6 }))).toMatchObject({ tokensUsed: 60 });
    });

    it("keys are independent; concurrent admits never exceed the limit", async () => {
      const counters = await impl.open({});
      const states = await Promise.all(
        Array.from({ length: 10 }, (_, i) => counters.admit(input({ keyId: `k${i % 2}`, rpm: 3 }))),
      );
      expect(states.filter((state) => state.refused === undefined)).toHaveLength(6);
    });
  });
}

const entry = (microUsd: number): SpendTotals => ({
  microUsd,
  requests: 1,
  inputTokens: 10,
  outputTokens: 5,
  cachedTokens: 2,
  reasoningTokens: 1,
});

/** Cases of {@link SpendStore}. */
export function spendStoreContract(impl: Implementation<SpendStore>): void {
  describe(`SpendStore contract: ${impl.name}`, () => {
    it("starts at zero; add returns the totals before and after; periods and keys are apart", async () => {
      const store = await impl.open({});
      expect((await store.get("k", "day:2026-11-26")).microUsd).toBe(0);
      const first = await store.add("k", "day:2026-11-26", entry(245));
      expect(first.before.microUsd).toBe(0);
      expect(first.after).toEqual(entry(245));
      const second = await store.add("k", "day:2026-11-26", entry(100));
      expect(second.before.microUsd).toBe(245);
      expect(second.after).toEqual({
        ...entry(345),
        requests: 2,
        inputTokens: 20,
        outputTokens: 10,
        cachedTokens: 4,
        reasoningTokens: 2,
      });
      expect((await store.get("k", "day:2026-11-27")).microUsd).toBe(0);
      expect((await store.get("other", "day:2026-11-26")).microUsd).toBe(0);
    });

    it("concurrent adds: every before is distinct and the sum is exact (one crossing per threshold)", async () => {
      const store = await impl.open({});
      const results = await Promise.all(Array.from({ length: 8 }, () => store.add("k", "month:2026-11", entry(7))));
      expect(new Set(results.map((result) => result.before.microUsd)).size).toBe(8);
      expect((await store.get("k", "month:2026-11")).microUsd).toBe(56);
    });

    const reserve = (store: SpendStore, id: string, microUsd: number, budget: number | undefined, now = T0) =>
      store.reserve({ keyId: "k", period: "day:2026-11-26", id, microUsd, budgetMicroUsd: budget, now, leaseMs: 1000 });
    const settle = (store: SpendStore, id: string, microUsd: number) =>
      store.settle({ keyId: "k", period: "day:2026-11-26", id, entry: entry(microUsd) });

    it("reserve: refused (nothing held) when spend + held + this would pass the budget; settle replaces it", async () => {
      const store = await impl.open({});
      expect(await reserve(store, "a", 60, 100)).toMatchObject({ admitted: true, reservedMicroUsd: 60 });
      expect(await reserve(store, "b", 50, 100)).toMatchObject({ admitted: false, reservedMicroUsd: 60 });
      expect(await reserve(store, "c", 40, 100)).toMatchObject({ admitted: true, reservedMicroUsd: 100 });
      // a cost 30, not 60: the 30 left over is free again.
      const settled = await settle(store, "a", 30);
      expect(settled).toMatchObject({ applied: true, before: { microUsd: 0 }, after: { microUsd: 30 } });
      const again = await reserve(store, "d", 30, 100);
      expect(again).toMatchObject({ admitted: true, reservedMicroUsd: 70, spent: { microUsd: 30, requests: 1 } });
      // Without a budget everything is reserved.
      expect((await reserve(store, "e", 10_000, undefined)).admitted).toBe(true);
    });

    it("settle is once per id: a retried settle adds nothing", async () => {
      const store = await impl.open({});
      await reserve(store, "a", 60, 1000);
      expect((await settle(store, "a", 45)).applied).toBe(true);
      const retried = await settle(store, "a", 45);
      expect(retried.applied).toBe(false);
      expect(retried.after.microUsd).toBe(45);
      // An id never reserved is added once too.
      expect((await settle(store, "never-reserved", 5)).after.microUsd).toBe(50);
      expect((await settle(store, "never-reserved", 5)).applied).toBe(false);
      expect((await store.get("k", "day:2026-11-26")).microUsd).toBe(50);
    });

    it("a reservation not renewed frees itself when its lease is over; a renewed one holds", async () => {
      const store = await impl.open({});
      await reserve(store, "kept", 40, 100);
      await reserve(store, "dropped", 40, 100);
      await store.renew("k", "day:2026-11-26", ["kept"], T0 + 900, 1000);
      expect(await reserve(store, "late", 60, 100, T0 + 1500)).toMatchObject({ admitted: true, reservedMicroUsd: 100 });
    });

    it("100 reservations at once against a budget for 10 admit exactly 10", async () => {
      const store = await impl.open({});
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => reserve(store, `r${i}`, 7, 70)));
      expect(results.filter((result) => result.admitted)).toHaveLength(10);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: the spend outlives the instance", async () => {
        const store = await impl.open({});
        await store.add("k", "week:2026-11-23", entry(1234));
        expect((await (await reopen({})).get("k", "week:2026-11-23")).microUsd).toBe(1234);
      });
    }
  });
}

const pending = (id: string): PendingSettle => ({
  keyId: "k",
  id,
  period: "month:2026-11",
  entry: entry(12),
  tokens: 15,
  finishedAt: T0,
  countersDone: false,
});

/** Cases of {@link SettleQueue}. */
export function settleQueueContract(impl: Implementation<SettleQueue>): void {
  describe(`SettleQueue contract: ${impl.name}`, () => {
    it("keeps pushed settles oldest first, one per id, until removed", async () => {
      const queue = await impl.open({});
      expect(await queue.list()).toEqual([]);
      await queue.push(pending("a"));
      await queue.push(pending("b"));
      await queue.push({ ...pending("a"), countersDone: true });
      expect(await queue.list()).toEqual([pending("b"), { ...pending("a"), countersDone: true }]);
      await queue.remove(["b"]);
      expect((await queue.list()).map((item) => item.id)).toEqual(["a"]);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: what waits outlives the instance", async () => {
        const queue = await impl.open({});
        await queue.push(pending("x"));
        expect(await (await reopen({})).list()).toEqual([pending("x")]);
      });
    }
  });
}
