/**
 * The reservations and settled ids of the in-process {@link SpendStore}s (memory, file): one instance holds them, so
 * they live in memory (after a restart the requests that held them are gone too). Every call is synchronous, so a
 * check and its reservation are one critical section in the process.
 */
import type { ReserveInput } from "./types.js";

/** Settled ids remembered (a retried settle finds its id among them). */
const SETTLED_KEPT = 100_000;

interface Held {
  microUsd: number;
  expiresAt: number;
}

/** Reservations per key and period, with leases, and the ids already settled. */
export class SpendReservations {
  private readonly held = new Map<string, Map<string, Held>>();
  private readonly settled = new Set<string>();

  private static slot(keyId: string, period: string): string {
    return `${period}\u0000${keyId}`;
  }

  /** Reservations held by a key in a period, expired ones dropped, micro-dollars. */
  heldMicroUsd(keyId: string, period: string, now: number): number {
    const slot = SpendReservations.slot(keyId, period);
    const map = this.held.get(slot);
    if (map === undefined) return 0;
    let sum = 0;
    for (const [id, held] of map) {
      if (held.expiresAt <= now) map.delete(id);
      else sum += held.microUsd;
    }
    if (map.size === 0) this.held.delete(slot);
    return sum;
  }

  /** Reserves when `spentMicroUsd` + held + this stays within the budget; returns what is held afterwards. */
  reserve(input: ReserveInput, spentMicroUsd: number): { admitted: boolean; reservedMicroUsd: number } {
    const held = this.heldMicroUsd(input.keyId, input.period, input.now);
    const amount = Math.max(0, Math.round(input.microUsd));
    if (input.budgetMicroUsd !== undefined && spentMicroUsd + held + amount > input.budgetMicroUsd) {
      return { admitted: false, reservedMicroUsd: held };
    }
    const slot = SpendReservations.slot(input.keyId, input.period);
    let map = this.held.get(slot);
    if (map === undefined) {
      map = new Map();
      this.held.set(slot, map);
    }
    map.set(input.id, { microUsd: amount, expiresAt: input.now + input.leaseMs });
    return { admitted: true, reservedMicroUsd: held + amount };
  }

  /** Whether `id` was settled already. */
  wasSettled(id: string): boolean {
    return this.settled.has(id);
  }

  /** Drops the reservation and remembers the id as settled. */
  settle(keyId: string, period: string, id: string): void {
    const slot = SpendReservations.slot(keyId, period);
    const map = this.held.get(slot);
    map?.delete(id);
    if (map?.size === 0) this.held.delete(slot);
    this.settled.add(id);
    if (this.settled.size > SETTLED_KEPT) {
      const oldest = this.settled.values().next().value;
      if (oldest !== undefined) this.settled.delete(oldest);
    }
  }

  renew(keyId: string, period: string, ids: readonly string[], now: number, leaseMs: number): void {
    const map = this.held.get(SpendReservations.slot(keyId, period));
    if (map === undefined) return;
    for (const id of ids) {
      const held = map.get(id);
      if (held !== undefined && held.expiresAt > now) held.expiresAt = now + leaseMs;
    }
  }
}
