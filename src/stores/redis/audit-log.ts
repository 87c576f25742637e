/**
 * The Redis {@link AuditLog} of instances sharing a store: one stream (XADD, trimmed to about `maxEntries` with
 * MAXLEN ~), read with XRANGE, or XREVRANGE for the newest `limit`.
 */
import { newest, parseAuditEntry } from "../audit-entries.js";
import type { AuditEntry, AuditLog } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** The stream's approximate length cap. @default 100000 */
export const AUDIT_STREAM_MAXLEN = 100_000;

type StreamEntries = [id: string, fields: string[]][];

function entriesOf(items: StreamEntries): AuditEntry[] {
  return items.flatMap(([, fields]) => {
    const index = fields.indexOf("entry");
    const entry = index < 0 ? undefined : parseAuditEntry(fields[index + 1] ?? "");
    return entry === undefined ? [] : [entry];
  });
}

/** The audit stream on `client`. */
export function createRedisAuditLog(client: StoreClient, maxEntries = AUDIT_STREAM_MAXLEN): AuditLog {
  const key = `${client.prefix}audit`;
  return {
    append: (entry) =>
      storeCall(client, async () => {
        await client.redis.xadd(key, "MAXLEN", "~", String(maxEntries), "*", "entry", JSON.stringify(entry));
      }),
    read: (options = {}) =>
      storeCall(client, async () => {
        if (options.limit === undefined) return entriesOf((await client.redis.xrange(key, "-", "+")) as StreamEntries);
        if (options.limit <= 0) return [];
        const items = (await client.redis.xrevrange(key, "+", "-", "COUNT", options.limit)) as StreamEntries;
        return newest(entriesOf(items.reverse()), options.limit);
      }),
  };
}
