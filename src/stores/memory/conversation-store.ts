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

/** Creates an in-memory store. */
export function createMemoryConversationStore(options: ConversationStoreOptions = {}): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  // Map order is save order: re-inserting on save keeps the oldest first.
  const records = new Map<string, ConversationRecord>();
  const expired = (record: ConversationRecord) => now() - record.updatedAt > ttlMs;
  return {
    async load(conversationId) {
      const record = records.get(conversationId);
      if (record === undefined) return undefined;
      if (expired(record)) {
        records.delete(conversationId);
        return undefined;
      }
      return { ...record, blobs: new Map(record.blobs) };
    },
    async save(record) {
      records.delete(record.conversationId);
      records.set(record.conversationId, pruneRecord(record));
      for (const id of records.keys()) {
        if (records.size <= maxEntries) break;
        records.delete(id);
      }
    },
    async delete(conversationId) {
      records.delete(conversationId);
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
