/**
 * The conversation index in the shared store: one string key per history key (`idx:<key>` → conversation id),
 * written with the conversation TTL so Redis expires it by itself. Every instance sees every entry at once.
 */
import type { ConversationIndex } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** Options of {@link createRedisConversationIndex}. */
export interface RedisConversationIndexOptions {
  client: StoreClient;
  /** Entries older than this are forgotten, as in the file index. @default 7 days */
  ttlMs?: number | undefined;
}

/** Creates the shared index. */
export function createRedisConversationIndex(options: RedisConversationIndexOptions): ConversationIndex {
  const { client } = options;
  const ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
  const keyOf = (key: string) => `${client.prefix}idx:${key}`;
  return {
    async remember(key, conversationId) {
      await storeCall(client, () => client.redis.set(keyOf(key), conversationId, "PX", ttlMs));
    },
    async lookup(key) {
      const value = await storeCall(client, () => client.redis.get(keyOf(key)));
      return value ?? undefined;
    },
    size: () => 0,
    close: async () => {},
  };
}
