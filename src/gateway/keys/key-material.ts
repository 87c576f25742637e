/**
 * Virtual key material: `cbk-` and 43 URL-safe characters (32 random bytes, base64url), shown once when made. What is
 * stored is its SHA-256 (hex) and its first ten characters, enough to recognise a key in a list but not to use it.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

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

/** The stored form of a key: hex SHA-256. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** The part of a key a list may show. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}

/** True when two hex digests are equal, in time independent of where they differ. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
