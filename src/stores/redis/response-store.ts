/**
 * Stored `/v1/responses` objects in the shared store (`resp:<id>` → JSON), so `previous_response_id` works on every
 * instance. Each record carries the TTL; the bound on the number of records is kept with a sorted set by save time
 * (`resp-times`), oldest removed first, as the file store does.
 */

import { type Logger, silentLogger } from "../../util/logger.js";
import {
  DEFAULT_CONVERSATION_TTL_MS,
  DEFAULT_MAX_STORED_RESPONSES,
  type ResponseStore,
  type ResponseStoreOptions,
  type StoredResponse,
} from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** Options of {@link createRedisResponseStore}. */
export interface RedisResponseStoreOptions extends ResponseStoreOptions {
  client: StoreClient;
  logger?: Logger;
}

function parse(text: string): StoredResponse | undefined {
  try {
    const value = JSON.parse(text) as Partial<StoredResponse>;
    if (typeof value.id !== "string" || typeof value.storedAt !== "number") return undefined;
    if (typeof value.response !== "object" || value.response === null || !Array.isArray(value.input)) return undefined;
    if (value.owner !== undefined && typeof value.owner !== "string") return undefined;
    return value as StoredResponse;
  } catch {
    return undefined;
  }
}

/** Creates the shared response store. */
export function createRedisResponseStore(options: RedisResponseStoreOptions): ResponseStore {
  const { client } = options;
  const { redis } = client;
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const keyOf = (id: string) => `${client.prefix}resp:${id}`;
  const timesKey = `${client.prefix}resp-times`;

  return {
    get: (id) =>
      storeCall(client, async () => {
        const text = await redis.get(keyOf(id));
        if (text === null) return undefined;
        const record = parse(text);
        if (record === undefined || record.id !== id) {
          logger.warn("discarding unreadable stored response", { id });
          await redis.multi().del(keyOf(id)).zrem(timesKey, id).exec();
          return undefined;
        }
        return now() - record.storedAt > ttlMs ? undefined : record;
      }),
    put: (record) =>
      storeCall(client, async () => {
        await redis
          .multi()
          .set(keyOf(record.id), JSON.stringify(record), "PX", ttlMs)
          .zadd(timesKey, record.storedAt, record.id)
          .pexpire(timesKey, ttlMs)
          .exec();
        await redis.zremrangebyscore(timesKey, "-inf", String(now() - ttlMs));
        const excess = (await redis.zcard(timesKey)) - maxEntries;
        if (excess <= 0) return;
        const oldest = await redis.zrange(timesKey, "0", String(excess - 1));
        if (oldest.length > 0) {
          await redis
            .multi()
            .del(...oldest.map(keyOf))
            .zrem(timesKey, ...oldest)
            .exec();
        }
      }),
    delete: (id) =>
      storeCall(client, async () => {
        const results = await redis.multi().del(keyOf(id)).zrem(timesKey, id).exec();
        return results?.[0]?.[1] === 1;
      }),
    deleteExpired: () => storeCall(client, async () => redis.zremrangebyscore(timesKey, "-inf", String(now() - ttlMs))),
  };
}
