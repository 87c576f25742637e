/**
 * The gateway's auth middleware, one of the guards every API door runs (so its 401 is in the door's shape). While no
 * virtual key exists it is the single `--api-key` check, unchanged (or no check without one). Once any key record
 * exists, every API request needs a key: a valid virtual key sets the request's {@link Principal}
 * (`c.set("principal", …)`, read by the kit's model check, the account choice and the limits that follow this
 * middleware); the `--api-key`, when set, stays valid as the operator's key, with no principal and no limits; an
 * unknown, revoked or expired key gets 401.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../../surfaces/kit/access-log.js";
import { LOCAL_API_KEY_DETAIL } from "../../surfaces/kit/openai-error.js";
import { ProxyError } from "../../util/errors.js";
import { apiKeyMatches, presentedKey } from "../../util/presented-key.js";
import type { KeyIndex } from "./key-index.js";
import { principalOf } from "./principal.js";

/** Options of {@link keyAuth}. */
export interface KeyAuthOptions {
  index: KeyIndex;
  /** The single local API key (`--api-key`): the only key without virtual keys, the operator's key with them. */
  apiKey: string | undefined;
}

const unauthenticated = (message: string) =>
  new ProxyError("unauthenticated", message, { detail: LOCAL_API_KEY_DETAIL });

/** Whom a person without a valid key asks. */
const ASK = "Ask the person who runs this server (who gave you its address) for yours.";

/** The auth guard of the API doors. */
export function keyAuth(options: KeyAuthOptions): MiddlewareHandler<AppEnv> {
  const { index, apiKey } = options;
  // Not async: the common answers (no virtual keys yet, the operator's key) pass straight on, with no frame of this
  // guard to resume on the way back to the answer's first byte (server/request-guard.ts, guardHost); only a virtual
  // key's lookup waits.
  return (c, next) => {
    const key = presentedKey(c.req.header("authorization"), c.req.header("x-api-key"));
    if (!index.hasKeys()) {
      if (apiKey !== undefined && (key === undefined || !apiKeyMatches(key, apiKey))) {
        throw unauthenticated(
          key === undefined
            ? "Missing API key: send `Authorization: Bearer <key>` with the key cursor-bridge was started with."
            : "Invalid API key for this cursor-bridge server.",
        );
      }
      return next();
    }
    if (key === undefined) {
      throw unauthenticated(
        `Missing API key: this cursor-bridge server gives each person a key of their own (cbk-…); send yours as \`Authorization: Bearer <key>\`. ${ASK}`,
      );
    }
    if (apiKey !== undefined && apiKeyMatches(key, apiKey)) return next();
    return admitVirtualKey(c, next, index, key);
  };
}

/** Looks a virtual key up; a valid one sets the request's principal and passes on. */
async function admitVirtualKey(c: Context<AppEnv>, next: Next, index: KeyIndex, key: string): Promise<void> {
  const found = await index.lookup(key);
  if (found.status === "valid") {
    c.set("principal", principalOf(found.record, index));
    return next();
  }
  if (found.status === "revoked") {
    throw unauthenticated("This API key has been revoked; ask the person who runs this server for a new one.");
  }
  if (found.status === "expired") {
    throw unauthenticated(
      `This API key expired at ${found.record.expiresAt}; ask the person who runs this server for a new one.`,
    );
  }
  throw unauthenticated(
    `Invalid API key: this cursor-bridge server gives each person a key of their own (cbk-…), and this is not one of them (a key made for another server, or the \`local\` placeholder of a setup made before keys existed?). ${ASK}`,
  );
}
