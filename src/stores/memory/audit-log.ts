/** The in-memory {@link AuditLog} (tests, the test stack): the newest `maxEntries` entries of this process. */
import { newest } from "../audit-entries.js";
import type { AuditEntry, AuditLog } from "../types.js";

/** An audit log held in this process. */
export function createMemoryAuditLog(maxEntries = 10_000): AuditLog {
  const entries: AuditEntry[] = [];
  return {
    async append(entry) {
      entries.push(structuredClone(entry));
      if (entries.length > maxEntries) entries.splice(0, entries.length - maxEntries);
    },
    read: async (options = {}) => newest(entries, options.limit).map((entry) => structuredClone(entry)),
  };
}
