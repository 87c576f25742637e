/**
 * The Redis {@link CredentialStore}: one Cursor login shared by every instance on the store. The record lives in
 * Redis encrypted at rest (AES-256-GCM with a key the caller derives from the cluster secret, which comes from the
 * environment); refreshing it is single-flight across instances through the Redis lock (lock.ts).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { ProxyError } from "../../util/errors.js";
import { checkAccountName } from "../accounts.js";
import { checkStoredCredentials, credentialRecord } from "../credentials.js";
import { type CredentialStore, type CredentialsInput, DEFAULT_ACCOUNT } from "../types.js";
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

/** The Redis key of an account's record: `credentials` for the default account, `credentials:<name>` otherwise. */
export function credentialKey(client: StoreClient, account: string = DEFAULT_ACCOUNT): string {
  return account === DEFAULT_ACCOUNT
    ? `${client.prefix}credentials`
    : `${client.prefix}credentials:${checkAccountName(account)}`;
}

/** The Redis set of the named accounts with a record (the default account's record is looked up directly). */
export function accountSetKey(client: StoreClient): string {
  return `${client.prefix}accounts`;
}

/**
 * The shared credential store (no expiry: a login must not vanish while nobody uses the gateway). `key` is the
 * 32-byte AES key of the records (cluster/cluster-auth.ts derives it from the cluster secret); `account` names a
 * named account's record (default: the default account's).
 */
export function createRedisCredentialStore(
  client: StoreClient,
  key: Buffer,
  now: () => Date = () => new Date(),
  account: string = DEFAULT_ACCOUNT,
): CredentialStore {
  const redisKey = credentialKey(client, account);
  const named = account !== DEFAULT_ACCOUNT;
  const login = named ? `\`cursor-bridge login --account ${account}\`` : "";
  return {
    location: `${client.label} (${named ? `account ${account}, ` : ""}encrypted, shared by the instances)`,
    load: () =>
      storeCall(client, async () => {
        const sealed = await client.redis.get(redisKey);
        if (sealed === null) return undefined;
        const plain = openCredentials(key, sealed);
        const checked = plain === undefined ? undefined : checkStoredCredentials(JSON.parse(plain));
        if (checked?.ok !== true) {
          throw new ProxyError(
            "unauthenticated",
            `The shared credentials${named ? ` of account ${account}` : ""} in ${client.label} cannot be read with this cluster secret; log in again${login === "" ? "" : ` (${login})`} on one instance.`,
            { detail: "invalid_credentials_file" },
          );
        }
        return checked.credentials;
      }),
    save: (input: CredentialsInput) =>
      storeCall(client, async () => {
        const record = credentialRecord(input, now());
        const sealed = sealCredentials(key, JSON.stringify(record));
        if (named) await client.redis.multi().set(redisKey, sealed).sadd(accountSetKey(client), account).exec();
        else await client.redis.set(redisKey, sealed);
        return record;
      }),
    clear: () =>
      storeCall(client, async () => {
        if (!named) return (await client.redis.del(redisKey)) > 0;
        const results = await client.redis.multi().del(redisKey).srem(accountSetKey(client), account).exec();
        return Number(results?.[0]?.[1] ?? 0) > 0;
      }),
  };
}
