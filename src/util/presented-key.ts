/**
 * Reading and comparing the key a request presents (`Authorization: Bearer <key>` or `x-api-key: <key>`): shared by
 * the single local API key (server/api-key.ts), the team gateway's virtual and admin keys, and the status page.
 */
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** True when `presented` equals `expected`, in time independent of where they differ (compared as SHA-256 digests). */
export function apiKeyMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
}

/** The key a request presents, from `Authorization: Bearer` or `x-api-key`. */
export function presentedKey(authorization: string | undefined, xApiKey: string | undefined): string | undefined {
  return bearerToken(authorization) ?? xApiKey?.trim();
}
