/**
 * The in-memory {@link ConversationStore}: the same TTL, garbage collection and entry cap as the file and Redis
 * stores, lost on restart (tests, benchmarks, the test stack).
 */
import { pruneRecord } from "../blob-graph.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationStoreOptions,
  DEFAULT_CONVERSATION_TTL_MS,
} from "../types.js";
import { createExpiringMap } from "./expiring-map.js";

/** Creates an in-memory store. */
export function createMemoryConversationStore(options: ConversationStoreOptions = {}): ConversationStore {
  const records = createExpiringMap<ConversationRecord>({
    ttlMs: options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS,
    maxEntries: options.maxEntries ?? 10_000,
    now: options.now ?? Date.now,
    timeOf: (record) => record.updatedAt,
  });
  return {
    async load(conversationId) {
      const record = records.get(conversationId);
      return record === undefined ? undefined : { ...record, blobs: new Map(record.blobs) };
    },
    async save(record) {
      records.set(record.conversationId, pruneRecord(record));
    },
    async delete(conversationId) {
      records.delete(conversationId);
    },
    async deleteExpired() {
      return records.deleteExpired();
    },
  };
}
