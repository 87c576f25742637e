/**
 * The {@link Principal} of a request made with a virtual key: the key's id, name, account and limits as stored, and a
 * model check that passes when the model the client asked for or the Cursor model it resolved to matches one of the
 * key's globs (so a key for `gpt-5*` may use an alias resolving to it, and a key for `my-alias` the alias itself).
 */
import type { VirtualKeyRecord } from "../../stores/types.js";
import { LOCAL_API_KEY_DETAIL } from "../../surfaces/kit/openai-error.js";
import type { Principal } from "../../surfaces/kit/principal.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage } from "../../util/logger.js";
import type { KeyGone, KeyIndex } from "./key-index.js";
import { matchesAnyGlob } from "./model-globs.js";

/** Why a running request's key stopped working, as the error that ends the request. */
function keyGoneError(name: string, why: KeyGone): ProxyError {
  const what =
    why === "rotated" ? "was replaced by a new key (rotated)" : why === "revoked" ? "was revoked" : "expired";
  return new ProxyError(
    "unauthenticated",
    `The API key "${name}" ${what} while this request ran; ask the person who runs this server for a new one.`,
    { detail: LOCAL_API_KEY_DETAIL },
  );
}

/** The principal of a key record; `index` lets a running request watch its key (cut when it stops working). */
export function principalOf(record: VirtualKeyRecord, index?: Pick<KeyIndex, "watch">): Principal {
  const globs = record.models;
  // One literal, then watchKey: a conditional spread in front of the literal cost each keyed request microseconds.
  const principal: Principal = {
    keyId: record.id,
    keyName: record.name,
    account: record.account,
    limits: record.limits,
    checkModel(requested, resolved) {
      if (globs === undefined || globs.length === 0) return;
      if (matchesAnyGlob(globs, requested) || matchesAnyGlob(globs, resolved)) return;
      const named = requested === resolved ? `\`${requested}\`` : `\`${requested}\` (${resolved})`;
      throw new ProxyError(
        "permission_denied",
        `The key "${record.name}" may not use the model ${clampForMessage(named, 300)}; it may use: ${globs.join(", ")}.`,
        { detail: "permission_denied", param: "model", status: 403 },
      );
    },
  };
  if (index !== undefined) {
    principal.watchKey = (onGone) => index.watch(record, (why) => onGone(keyGoneError(record.name, why)));
  }
  return principal;
}
