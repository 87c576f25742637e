/**
 * Conversation records in the shared store. Blobs are content-addressed (`blob:<hex id>` → bytes) and shared by
 * every conversation that references them; a record (`conv:<id>`) is one string holding its metadata and checkpoint.
 * A save writes the blobs first and the record last, in one command each batch, so a reader never sees a record whose
 * blobs were not written; a failure half-way leaves only blobs, which expire with the TTL (every key carries one).
 * The entry cap is kept with a sorted set of records by save time (`conv-times`), oldest removed first; the byte cap
 * is Redis's own `maxmemory` (with `volatile-lru`, docs/team.md), since Redis, not this process, knows the memory in
 * use.
 */

import { type Logger, silentLogger } from "../../util/logger.js";
import { pruneRecord } from "../blob-graph.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationStoreOptions,
  DEFAULT_CONVERSATION_TTL_MS,
} from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** Options of {@link createRedisConversationStore}. */
export interface RedisConversationStoreOptions extends ConversationStoreOptions {
  client: StoreClient;
  logger?: Logger;
}

interface Meta {
  conversationId: string;
  coveredMessages: number;
  fingerprint: string;
  updatedAt: number;
  blobs: string[];
}

/** `u32 meta length | meta JSON | checkpoint bytes`: one binary-safe string per record. */
export function encodeRecord(record: ConversationRecord): Buffer {
  const meta: Meta = {
    conversationId: record.conversationId,
    coveredMessages: record.coveredMessages,
    fingerprint: record.fingerprint,
    updatedAt: record.updatedAt,
    blobs: [...record.blobs.keys()],
  };
  const json = Buffer.from(JSON.stringify(meta), "utf8");
  const head = Buffer.alloc(4);
  head.writeUInt32BE(json.length);
  return Buffer.concat([head, json, record.checkpoint]);
}

/** The metadata and checkpoint of an encoded record; undefined when the bytes are not one. */
export function decodeRecord(bytes: Buffer): { meta: Meta; checkpoint: Uint8Array } | undefined {
  if (bytes.length < 4) return undefined;
  const length = bytes.readUInt32BE(0);
  if (4 + length > bytes.length) return undefined;
  try {
    const meta = JSON.parse(bytes.subarray(4, 4 + length).toString("utf8")) as Meta;
    if (typeof meta.conversationId !== "string" || !Array.isArray(meta.blobs)) return undefined;
    return { meta, checkpoint: new Uint8Array(bytes.subarray(4 + length)) };
  } catch {
    return undefined;
  }
}

/** Creates the shared conversation store. */
export function createRedisConversationStore(options: RedisConversationStoreOptions): ConversationStore {
  const { client } = options;
  const { redis } = client;
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const recordKey = (id: string) => `${client.prefix}conv:${id}`;
  const blobKey = (hex: string) => `${client.prefix}blob:${hex}`;
  const timesKey = `${client.prefix}conv-times`;

  const trim = async () => {
    await redis.zremrangebyscore(timesKey, "-inf", String(now() - ttlMs));
    const excess = (await redis.zcard(timesKey)) - maxEntries;
    if (excess <= 0) return;
    const oldest = await redis.zrange(timesKey, "0", String(excess - 1));
    if (oldest.length === 0) return;
    await redis
      .multi()
      .del(...oldest.map(recordKey))
      .zrem(timesKey, ...oldest)
      .exec();
    logger.info("removed the oldest stored conversations: over the entry cap", { removed: oldest.length, maxEntries });
  };

  return {
    load: (conversationId) =>
      storeCall(client, async () => {
        const bytes = await redis.getBuffer(recordKey(conversationId));
        if (bytes === null) return undefined;
        const decoded = decodeRecord(bytes);
        if (decoded === undefined || decoded.meta.conversationId !== conversationId) {
          logger.warn("discarding an unreadable stored conversation", { conversationId });
          await redis.del(recordKey(conversationId));
          return undefined;
        }
        const { meta, checkpoint } = decoded;
        if (now() - meta.updatedAt > ttlMs) return undefined;
        const blobs = new Map<string, Uint8Array>();
        if (meta.blobs.length > 0) {
          const values = await redis.mgetBuffer(...meta.blobs.map(blobKey));
          meta.blobs.forEach((id, i) => {
            const value = values[i];
            // A missing blob makes the turn rebuild (turn-setup checks the checkpoint's blobs).
            if (value !== null && value !== undefined) blobs.set(id, new Uint8Array(value));
          });
        }
        return {
          conversationId,
          checkpoint,
          coveredMessages: meta.coveredMessages,
          fingerprint: meta.fingerprint,
          updatedAt: meta.updatedAt,
          blobs,
        };
      }),
    save: (input) =>
      storeCall(client, async () => {
        const record = pruneRecord(input);
        const ids = [...record.blobs.keys()];
        if (ids.length > 0) {
          // Refresh the blobs already stored; write only the ones Redis does not have.
          const refresh = redis.pipeline();
          for (const id of ids) refresh.pexpire(blobKey(id), ttlMs);
          const refreshed = (await refresh.exec()) ?? [];
          const write = redis.multi();
          let writes = 0;
          ids.forEach((id, i) => {
            const [error, existed] = refreshed[i] ?? [null, 0];
            if (error === null && existed === 1) return;
            const data = record.blobs.get(id);
            if (data === undefined) return;
            write.set(blobKey(id), Buffer.from(data.buffer, data.byteOffset, data.byteLength), "PX", ttlMs);
            writes += 1;
          });
          if (writes > 0) await write.exec();
        }
        await redis
          .multi()
          .set(recordKey(record.conversationId), encodeRecord(record), "PX", ttlMs)
          .zadd(timesKey, record.updatedAt, record.conversationId)
          .pexpire(timesKey, ttlMs)
          .exec();
        await trim();
      }),
    delete: (conversationId) =>
      storeCall(client, async () => {
        await redis.multi().del(recordKey(conversationId)).zrem(timesKey, conversationId).exec();
      }),
    deleteExpired: () =>
      // Redis expires the records and blobs itself; only the bookkeeping set needs pruning.
      storeCall(client, async () => redis.zremrangebyscore(timesKey, "-inf", String(now() - ttlMs))),
  };
}
