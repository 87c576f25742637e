/** The in-memory {@link ResponseStore}: the same TTL and bound as the file and Redis stores (tests, the test stack). */
import {
  DEFAULT_CONVERSATION_TTL_MS,
  DEFAULT_MAX_STORED_RESPONSES,
  type ResponseStore,
  type ResponseStoreOptions,
  type StoredResponse,
} from "../types.js";
import { createExpiringMap } from "./expiring-map.js";

/** Creates the in-memory store. */
export function createMemoryResponseStore(options: ResponseStoreOptions = {}): ResponseStore {
  const records = createExpiringMap<StoredResponse>({
    ttlMs: options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS,
    maxEntries: options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES,
    now: options.now ?? Date.now,
    timeOf: (record) => record.storedAt,
  });
  return {
    async get(id) {
      const record = records.get(id);
      return record === undefined ? undefined : structuredClone(record);
    },
    async put(record) {
      records.set(record.id, structuredClone(record));
    },
    async delete(id) {
      return records.delete(id);
    },
    async deleteExpired() {
      return records.deleteExpired();
    },
  };
}
