/**
 * Finds the Cursor conversation a stateless OpenAI request belongs to. After each response the server records
 * fingerprint(history + the assistant message it produced) → conversation id; the next request of that chat carries
 * exactly that history as its prefix, so fingerprint(prefix) finds the conversation and its stored checkpoint.
 * Bounded LRU: the oldest entries go first.
 */

/** Options of {@link createConversationIndex}. */
export interface ConversationIndexOptions {
  /** @default 10_000 */
  maxEntries?: number;
}

/** Fingerprint → conversation id. */
export interface ConversationIndex {
  remember(fingerprint: string, conversationId: string): void;
  lookup(fingerprint: string): string | undefined;
  size(): number;
}

/** Creates an in-memory LRU conversation index. */
export function createConversationIndex(options: ConversationIndexOptions = {}): ConversationIndex {
  const maxEntries = options.maxEntries ?? 10_000;
  const entries = new Map<string, string>();
  return {
    remember(fingerprint, conversationId) {
      entries.delete(fingerprint);
      entries.set(fingerprint, conversationId);
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
    },
    lookup(fingerprint) {
      const id = entries.get(fingerprint);
      if (id !== undefined) {
        entries.delete(fingerprint);
        entries.set(fingerprint, id);
      }
      return id;
    },
    size: () => entries.size,
  };
}
