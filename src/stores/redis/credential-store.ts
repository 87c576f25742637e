/**
 * The Redis {@link CredentialStore}: one Cursor login shared by every instance on the store. The record lives in
 * Redis encrypted at rest (AES-256-GCM with a key the caller derives from the cluster secret, which comes from the
 * environment); refreshing it is single-flight across instances through the Redis lock (lock.ts).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ProxyError } from "../../util/errors.js";
import { checkStoredCredentials, credentialRecord } from "../credentials.js";
import type { CredentialStore, CredentialsInput } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";

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

/**
 * The shared credential store (no expiry: a login must not vanish while nobody uses the gateway). `key` is the
 * 32-byte AES key of the records (cluster/cluster-auth.ts derives it from the cluster secret).
 */
export function createRedisCredentialStore(
  client: StoreClient,
  key: Buffer,
  now: () => Date = () => new Date(),
): CredentialStore {
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
        const record = credentialRecord(input, now());
        await client.redis.set(redisKey, sealCredentials(key, JSON.stringify(record)));
        return record;
      }),
    clear: () => storeCall(client, async () => (await client.redis.del(redisKey)) > 0),
  };
}
