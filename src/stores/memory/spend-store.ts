/** The in-memory {@link SpendStore} (tests, and the fallback when nothing durable is configured). */
import { SpendReservations } from "../spend-reservations.js";
import { addSpend, zeroSpend } from "../spend-totals.js";
import type { SpendStore, SpendTotals } from "../types.js";

/** Spend kept in this process only; each call is one synchronous critical section. */
export function createMemorySpendStore(): SpendStore {
  const totals = new Map<string, SpendTotals>();
  const reservations = new SpendReservations();
  const keyOf = (keyId: string, period: string) => `${period}\u0000${keyId}`;
  const current = (keyId: string, period: string) => totals.get(keyOf(keyId, period)) ?? zeroSpend();
  const add = (keyId: string, period: string, entry: SpendTotals) => {
    const before = current(keyId, period);
    const after = addSpend(before, entry);
    totals.set(keyOf(keyId, period), after);
    return { before, after };
  };
  return {
    async add(keyId, period, entry) {
      return add(keyId, period, entry);
    },
    async get(keyId, period) {
      return { ...current(keyId, period) };
    },
    async reserve(input) {
      const spent = current(input.keyId, input.period);
      // Named fields, not a spread of the answer: spreading a fresh object into a literal costs ~0.4 µs.
      const { admitted, reservedMicroUsd } = reservations.reserve(input, spent.microUsd);
      return { admitted, reservedMicroUsd, spent: { ...spent } };
    },
    async settle({ keyId, period, id, entry }) {
      if (reservations.wasSettled(id)) {
        const now = current(keyId, period);
        return { before: { ...now }, after: { ...now }, applied: false };
      }
      reservations.settle(keyId, period, id);
      const { before, after } = add(keyId, period, entry);
      return { before, after, applied: true };
    },
    async renew(keyId, period, ids, now, leaseMs) {
      reservations.renew(keyId, period, ids, now, leaseMs);
    },
  };
}
