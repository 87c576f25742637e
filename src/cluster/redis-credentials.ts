/**
 * One Cursor login shared by every instance on the Redis store. The credential record lives in Redis encrypted at
 * rest (AES-256-GCM with a key derived from the cluster secret, which comes from the environment), and refreshing
 * it is single-flight across instances: a refresh runs under a Redis lock and first re-reads the record, so an
 * instance that finds tokens another one just rotated uses them instead of spending a refresh token that is gone.
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from "node:crypto";
import { checkStoredCredentials } from "../auth/credential-store.js";
import type { CredentialStore, CredentialsInput, StoredCredentials } from "../auth/index.js";
import { type StoreClient, storeCall } from "../stores/redis/client.js";
import { ProxyError } from "../util/errors.js";
import { deriveKey } from "./cluster-auth.js";

const FORMAT = "cbc1";

/** Encrypts a credential record (`cbc1.<iv>.<tag>.<ciphertext>`, base64url parts). */
export function sealCredentials(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return [FORMAT, iv, cipher.getAuthTag(), body]
    .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
    .join(".");
}

/** Decrypts {@link sealCredentials}; undefined when the text is not ours or was sealed with another secret. */
export function openCredentials(key: Buffer, sealed: string): string | undefined {
  const [format, iv, tag, body] = sealed.split(".");
  if (format !== FORMAT || iv === undefined || tag === undefined || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/** The shared credential store (no expiry: a login must not vanish while nobody uses the gateway). */
export function createRedisCredentialStore(
  client: StoreClient,
  secret: string,
  now: () => Date = () => new Date(),
): CredentialStore {
  const key = deriveKey(secret, "credentials at rest");
  const redisKey = `${client.prefix}credentials`;
  return {
    location: `${client.label} (encrypted, shared by the instances)`,
    load: () =>
      storeCall(client, async () => {
        const sealed = await client.redis.get(redisKey);
        if (sealed === null) return undefined;
        const plain = openCredentials(key, sealed);
        const checked = plain === undefined ? undefined : checkStoredCredentials(JSON.parse(plain));
        if (checked?.ok !== true) {
          throw new ProxyError(
            "unauthenticated",
            `The shared credentials in ${client.label} cannot be read with this cluster secret; log in again on one instance.`,
            { detail: "invalid_credentials_file" },
          );
        }
        return checked.credentials;
      }),
    save: (input: CredentialsInput) =>
      storeCall(client, async () => {
        const record: StoredCredentials = { version: 1, ...input, savedAt: now().toISOString() };
        await client.redis.set(redisKey, sealCredentials(key, JSON.stringify(record)));
        return record;
      }),
    clear: () => storeCall(client, async () => (await client.redis.del(redisKey)) > 0),
  };
}

/** Options of {@link createRedisLock}. */
export interface RedisLockOptions {
  /** The lock expires by itself after this long (a crashed holder cannot block the others). @default 30000 */
  ttlMs?: number;
  /** How long to wait for the lock before giving up with a 503. @default 20000 */
  waitMs?: number;
}

const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** A lock across instances: `lock(work)` runs `work` while holding `name`, one instance at a time. */
export function createRedisLock(client: StoreClient, name: string, options: RedisLockOptions = {}) {
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
