/**
 * The Redis {@link StoreLock}: one holder at a time across every instance on the store (`SET NX PX` with a token,
 * released by a compare-and-delete script). It expires by itself after `ttlMs`, so a crashed holder blocks the others
 * for at most that long; a waiter gives up with a 503 after `waitMs`.
 */
import { randomUUID } from "node:crypto";
import { ProxyError } from "../../util/errors.js";
import type { StoreLock } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

/** Options of {@link createRedisLock}. */
export interface RedisLockOptions {
  /** The lock expires by itself after this long (a crashed holder cannot block the others). @default 30000 */
  ttlMs?: number;
  /** How long to wait for the lock before giving up with a 503. @default 20000 */
  waitMs?: number;
}

const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** A lock across instances: `lock(work)` runs `work` while holding `name`, one instance at a time. */
export function createRedisLock(client: StoreClient, name: string, options: RedisLockOptions = {}): StoreLock {
  const ttlMs = options.ttlMs ?? 30_000;
  const waitMs = options.waitMs ?? 20_000;
  const key = `${client.prefix}lock:${name}`;
  return async <T>(work: () => Promise<T>): Promise<T> => {
    const token = randomUUID();
    const deadline = Date.now() + waitMs;
    for (;;) {
      const acquired = await storeCall(client, () => client.redis.set(key, token, "PX", ttlMs, "NX"));
      if (acquired === "OK") break;
      if (Date.now() > deadline) {
        throw new ProxyError(
          "backend_unavailable",
          `Timed out waiting for the shared ${name} lock in ${client.label}.`,
          {
            detail: "store_unavailable",
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    try {
      return await work();
    } finally {
      await client.redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    }
  };
}
