/** The in-memory {@link AuditLog} (tests): the newest `maxEntries` entries of this process. */
import type { AuditEntry, AuditLog } from "../types.js";

/** An audit log held in this process. */
export function createMemoryAuditLog(maxEntries = 10_000): AuditLog {
  const entries: AuditEntry[] = [];
  return {
    async append(entry) {
      entries.push(structuredClone(entry));
      if (entries.length > maxEntries) entries.splice(0, entries.length - maxEntries);
    },
    async read(options = {}) {
      const limit = options.limit;
      const kept = limit === undefined ? entries : entries.slice(Math.max(0, entries.length - limit));
      return kept.map((entry) => structuredClone(entry));
    },
  };
}
