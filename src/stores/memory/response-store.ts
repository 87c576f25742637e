/** The in-memory {@link ResponseStore}: the same TTL and bound as the file and Redis stores (tests, the test stack). */
import {
  DEFAULT_CONVERSATION_TTL_MS,
  DEFAULT_MAX_STORED_RESPONSES,
  type ResponseStore,
  type ResponseStoreOptions,
  type StoredResponse,
} from "../types.js";

/** Creates the in-memory store. */
export function createMemoryResponseStore(options: ResponseStoreOptions = {}): ResponseStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES;
  const now = options.now ?? Date.now;
  // Map order is insertion order: re-inserting on put keeps the oldest first.
  const records = new Map<string, StoredResponse>();
  const expired = (record: StoredResponse) => now() - record.storedAt > ttlMs;
  return {
    async get(id) {
      const record = records.get(id);
      if (record === undefined) return undefined;
      if (expired(record)) {
        records.delete(id);
        return undefined;
      }
      return structuredClone(record);
    },
    async put(record) {
      records.delete(record.id);
      records.set(record.id, structuredClone(record));
      for (const id of records.keys()) {
        if (records.size <= maxEntries) break;
        records.delete(id);
      }
    },
    async delete(id) {
      return records.delete(id);
    },
    async deleteExpired() {
      let removed = 0;
      for (const [id, record] of records) {
        if (!expired(record)) continue;
        records.delete(id);
        removed += 1;
      }
      return removed;
    },
  };
}
