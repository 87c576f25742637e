/**
 * Local API key check (a security default): `Authorization: Bearer <key>` or `x-api-key: <key>`, compared in
 * constant time over SHA-256 digests so neither content nor length leaks through timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { LOCAL_API_KEY_DETAIL } from "../surfaces/kit/openai-error.js";
import { ProxyError } from "../util/errors.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** True when `presented` equals `expected`, in time independent of where they differ. */
export function apiKeyMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The key a request presents, from `Authorization: Bearer` or `x-api-key`. */
export function presentedKey(authorization: string | undefined, xApiKey: string | undefined): string | undefined {
  const bearer = authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  return bearer ?? xApiKey?.trim();
}

/** Rejects requests without the configured key with an OpenAI-shaped 401. */
export function requireApiKey(expected: string): MiddlewareHandler {
  return async (c, next) => {
    const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (key === undefined || !apiKeyMatches(key, expected)) {
      throw new ProxyError(
        "unauthenticated",
        key === undefined
          ? "Missing API key: send `Authorization: Bearer <key>` with the key cursor-bridge was started with."
          : "Invalid API key for this cursor-bridge server.",
        { detail: LOCAL_API_KEY_DETAIL },
      );
    }
    await next();
  };
}
