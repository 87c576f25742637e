/**
 * The bounded, expiring map behind the in-memory stores: entries older than `ttlMs` (by the time `timeOf` reads off
 * each value) are gone on read and on `deleteExpired`; past `maxEntries` the oldest write goes first (Map order is
 * write order: a write re-inserts its key).
 */
export interface ExpiringMap<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): boolean;
  /** Removes every expired entry; returns how many. */
  deleteExpired(): number;
}

export function createExpiringMap<V>(options: {
  ttlMs: number;
  maxEntries: number;
  now: () => number;
  /** When the value was written (its age is measured from it). */
  timeOf: (value: V) => number;
}): ExpiringMap<V> {
  const { ttlMs, maxEntries, now, timeOf } = options;
  const entries = new Map<string, V>();
  const expired = (value: V) => now() - timeOf(value) > ttlMs;
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      if (expired(value)) {
        entries.delete(key);
        return undefined;
      }
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      for (const oldest of entries.keys()) {
        if (entries.size <= maxEntries) break;
        entries.delete(oldest);
      }
    },
    delete: (key) => entries.delete(key),
    deleteExpired() {
      let removed = 0;
      for (const [key, value] of entries) {
        if (!expired(value)) continue;
        entries.delete(key);
        removed += 1;
      }
      return removed;
    },
  };
}
