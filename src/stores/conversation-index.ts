/**
 * Which conversation a stateless request extends. After each reply the engine records
 * key(history + the assistant reply) → conversation id (see backend/history-fingerprint.ts); the next request of
 * that chat carries exactly that history as a prefix, so the key of the prefix finds the conversation and its stored
 * checkpoint. Bounded: beyond `maxEntries` the least recently used entries go first.
 */

/** Options of {@link createMemoryConversationIndex}. */
export interface ConversationIndexOptions {
  /** @default 10_000 */
  maxEntries?: number;
}

/** History key → conversation id. The file implementation is durable; the memory one serves tests. */
export interface ConversationIndex {
  /** Records the key; the promise resolves once the entry is durable (a crash after that loses nothing). */
  remember(key: string, conversationId: string): Promise<void>;
  /** The conversation of a key; async because a shared store (Redis) answers over the network. */
  lookup(key: string): Promise<string | undefined>;
  /** Entries held by this process (a shared store reports what it knows locally, or 0). */
  size(): number;
  /** Flushes pending writes and releases resources. */
  close(): Promise<void>;
}

/** A bounded LRU map shared by the index implementations. */
export class LruMap {
  private readonly entries = new Map<string, string>();

  constructor(private readonly maxEntries: number) {}

  /** Sets the entry; returns the keys evicted to stay within the cap. */
  set(key: string, value: string): string[] {
    this.entries.delete(key);
    this.entries.set(key, value);
    const evicted: string[] = [];
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
      evicted.push(oldest);
    }
    return evicted;
  }

  get(key: string): string | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** The value without refreshing recency. */
  peek(key: string): string | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries, least recently used first. */
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries.entries();
  }
}

/** Creates an in-memory index (lost on restart; the server uses the file index). */
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
