/**
 * Local API key check (a security default): `Authorization: Bearer <key>` or `x-api-key: <key>`, compared in
 * constant time over SHA-256 digests so neither content nor length leaks through timing.
 */
import type { MiddlewareHandler } from "hono";
import { LOCAL_API_KEY_DETAIL } from "../surfaces/kit/openai-error.js";
import { ProxyError } from "../util/errors.js";
import { apiKeyMatches, presentedKey } from "../util/presented-key.js";

export { apiKeyMatches, presentedKey };

/** Rejects requests without the configured key with an OpenAI-shaped 401. */
export function requireApiKey(expected: string): MiddlewareHandler {
  // Not async: nothing runs after `next()` (request-guard.ts, guardHost).
  return (c, next) => {
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
    return next();
  };
}
