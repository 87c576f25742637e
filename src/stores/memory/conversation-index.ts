/**
 * The in-memory {@link ConversationIndex} (lost on restart; the server uses the file index, or Redis's). Which
 * conversation a stateless request extends: after each reply the engine records key(history + the assistant reply)
 * → conversation id (see backend/history-fingerprint.ts); the next request of that chat carries exactly that history
 * as a prefix, so the key of the prefix finds the conversation and its stored checkpoint. Bounded: beyond
 * `maxEntries` the least recently used entries go first.
 */
import type { ConversationIndex, ConversationIndexOptions } from "../types.js";
import { LruMap } from "./lru-map.js";

/** Creates an in-memory index. */
export function createMemoryConversationIndex(options: ConversationIndexOptions = {}): ConversationIndex {
  const entries = new LruMap(options.maxEntries ?? 10_000);
  return {
    async remember(key, conversationId) {
      entries.set(key, conversationId);
    },
    lookup: async (key) => entries.get(key),
    size: () => entries.size,
    close: async () => {},
  };
}
