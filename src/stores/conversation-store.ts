/**
 * Per-conversation persistence of the latest checkpoint and the blobs it needs (docs/protocol.md §5.3, §5.4): the
 * next turn sends the checkpoint back as `conversation_state`, and the server then reads blobs set in earlier turns.
 * Saving drops blobs the checkpoint no longer reaches; records expire after a TTL.
 */
import { reachableBlobIds } from "./blob-graph.js";

/** Default time a conversation is kept after its last save: 7 days (another client, EPH, keeps the same; docs/protocol.md §5.3). */
export const DEFAULT_CONVERSATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** What is stored for one conversation. */
export interface ConversationRecord {
  readonly conversationId: string;
  /** Serialized `ConversationStateStructure` of the latest `conversation_checkpoint_update`. */
  readonly checkpoint: Uint8Array;
  /** How many of the caller's messages (the turn input) the checkpoint covers. */
  readonly coveredMessages: number;
  /** History fingerprint of those messages (see history-fingerprint.ts). */
  readonly fingerprint: string;
  /** Blobs by lowercase hex id. */
  readonly blobs: ReadonlyMap<string, Uint8Array>;
  /** Epoch milliseconds of the save. */
  readonly updatedAt: number;
}

/** Storage of conversation records; the file implementation is the default, the memory one serves tests/bench. */
export interface ConversationStore {
  /** The record, or undefined when unknown or expired. */
  load(conversationId: string): Promise<ConversationRecord | undefined>;
  /** Replaces the record; blobs not reachable from the checkpoint are not kept. */
  save(record: ConversationRecord): Promise<void>;
  delete(conversationId: string): Promise<void>;
  /** Removes expired records; resolves to how many were removed. */
  deleteExpired(): Promise<number>;
}

/** Options shared by the store implementations. */
export interface ConversationStoreOptions {
  /** @default 7 days */
  ttlMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** The record with only the blobs its checkpoint reaches (garbage collection, §5.3). */
export function pruneRecord(record: ConversationRecord): ConversationRecord {
  const keep = reachableBlobIds(record.checkpoint, record.blobs);
  const blobs = new Map<string, Uint8Array>();
  for (const id of keep) {
    const blob = record.blobs.get(id);
    if (blob !== undefined) blobs.set(id, blob);
  }
  return { ...record, blobs };
}

/** Creates an in-memory store with the same TTL and GC semantics as the file store. */
export function createMemoryConversationStore(options: ConversationStoreOptions = {}): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const now = options.now ?? Date.now;
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
      records.set(record.conversationId, pruneRecord(record));
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
