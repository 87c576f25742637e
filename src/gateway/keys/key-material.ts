/**
 * Virtual key material: `cbk-` and 43 URL-safe characters (32 random bytes, base64url), shown once when made. What is
 * stored is its SHA-256 (hex) and its first ten characters, enough to recognise a key in a list but not to use it.
 */
import * as crypto from "node:crypto";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Node's one-shot `crypto.hash` (20.12+, 21.7+), cheaper than a Hash object; older Nodes lack it. */
const oneShotHash = (crypto as Partial<typeof crypto>).hash;

/** What every virtual key starts with. */
export const KEY_PREFIX = "cbk-";

/** Characters of a key kept for display (`cbk-` and 6 more). */
const DISPLAY_LENGTH = KEY_PREFIX.length + 6;

/** A new key: `cbk-` + base64url of 32 random bytes. */
export function newKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/** A new record id (`vk_` + 16 hex digits; not `key_…`, the prefix of a Cursor API key): stable across rotations, never secret. */
export function newKeyId(): string {
  return `vk_${randomBytes(8).toString("hex")}`;
}

/** The SHA-256 of a key, as bytes. */
export function keyDigest(key: string): Buffer {
  return oneShotHash === undefined
    ? createHash("sha256").update(key, "utf8").digest()
    : oneShotHash("sha256", key, "buffer");
}

/** The stored form of a key: hex SHA-256. */
export function hashKey(key: string): string {
  return keyDigest(key).toString("hex");
}

/** The part of a key a list may show. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}

/** True when two hex digests are equal, in time independent of where they differ. */
export function digestsEqual(a: string, b: string): boolean {
  return digestBytesEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));
}

/** True when two digests (bytes) are equal, in time independent of where they differ. */
export function digestBytesEqual(left: Buffer, right: Buffer): boolean {
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
