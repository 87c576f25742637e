/** The in-memory {@link KeyStore}: tests, the test stack, and a server without a durable store. */
import { conflictsWith, unknownKey, withChanges } from "../key-records.js";
import type { KeyStore, VirtualKeyRecord } from "../types.js";

/** A key store held in this process. */
export function createMemoryKeyStore(initial: readonly VirtualKeyRecord[] = []): KeyStore {
  const records: VirtualKeyRecord[] = initial.map((record) => structuredClone(record));
  let version = 0;
  return {
    location: "memory",
    list: async () => records.map((record) => structuredClone(record)),
    async create(record) {
      for (const existing of records) {
        const conflict = conflictsWith(record, existing);
        if (conflict !== undefined) throw conflict;
      }
      records.push(structuredClone(record));
      version += 1;
    },
    async update(id, changes) {
      const index = records.findIndex((record) => record.id === id);
      const current = records[index];
      if (current === undefined) throw unknownKey(id);
      const next = withChanges(current, changes);
      records[index] = next;
      version += 1;
      return structuredClone(next);
    },
    version: async () => String(version),
  };
}
