/** The in-memory {@link SpendStore} (tests, and the fallback when nothing durable is configured). */
import { addSpend, zeroSpend } from "../spend-totals.js";
import type { SpendStore, SpendTotals } from "../types.js";

/** Spend kept in this process only. */
export function createMemorySpendStore(): SpendStore {
  const totals = new Map<string, SpendTotals>();
  const keyOf = (keyId: string, period: string) => `${period}\u0000${keyId}`;
  return {
    async add(keyId, period, entry) {
      const before = totals.get(keyOf(keyId, period)) ?? zeroSpend();
      const after = addSpend(before, entry);
      totals.set(keyOf(keyId, period), after);
      return { before, after };
    },
    async get(keyId, period) {
      return { ...(totals.get(keyOf(keyId, period)) ?? zeroSpend()) };
    },
  };
}
