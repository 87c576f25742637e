/**
 * The Redis {@link KeyStore} of instances sharing a store: records in one hash (id → JSON), a hash of the live names
 * (name → id, claimed with HSETNX so two instances can never both create "alice"), and a counter every write
 * increments, which each running server polls to see a change from any instance or from `keys` on any machine.
 */
import { conflictsWith, parseKeyRecord, unknownKey, withChanges } from "../key-records.js";
import type { KeyStore, VirtualKeyRecord } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** The key store on `client` (its prefix separates deployments). */
export function createRedisKeyStore(client: StoreClient): KeyStore {
  const recordsKey = `${client.prefix}keys:records`;
  const namesKey = `${client.prefix}keys:names`;
  const versionKey = `${client.prefix}keys:version`;

  const get = async (id: string): Promise<VirtualKeyRecord | undefined> => {
    const text = await client.redis.hget(recordsKey, id);
    return text === null ? undefined : parseKeyRecord(JSON.parse(text));
  };

  return {
    location: `${client.label} (shared by the instances)`,
    list: () =>
      storeCall(client, async () => {
        const all = await client.redis.hvals(recordsKey);
        const records = all.map((text) => parseKeyRecord(JSON.parse(text)));
        return records
          .filter((record): record is VirtualKeyRecord => record !== undefined)
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
      }),
    create: (record) =>
      storeCall(client, async () => {
        const existing = await get(record.id);
        if (existing !== undefined) throw conflictsWith(record, existing);
        if (record.revokedAt === undefined && (await client.redis.hsetnx(namesKey, record.name, record.id)) === 0) {
          const holder = await get((await client.redis.hget(namesKey, record.name)) ?? "");
          const conflict = holder === undefined ? undefined : conflictsWith(record, holder);
          if (conflict !== undefined) throw conflict;
          // A name left behind by an interrupted revoke: its holder is gone or revoked, so the name is free.
          await client.redis.hset(namesKey, record.name, record.id);
        }
        await client.redis.multi().hset(recordsKey, record.id, JSON.stringify(record)).incr(versionKey).exec();
      }),
    update: (id, changes) =>
      storeCall(client, async () => {
        const current = await get(id);
        if (current === undefined) throw unknownKey(id);
        const next = withChanges(current, changes);
        const write = client.redis.multi().hset(recordsKey, id, JSON.stringify(next)).incr(versionKey);
        if (next.revokedAt !== undefined && (await client.redis.hget(namesKey, next.name)) === id) {
          write.hdel(namesKey, next.name);
        }
        await write.exec();
        return next;
      }),
    version: () => storeCall(client, async () => (await client.redis.get(versionKey)) ?? "0"),
  };
}
