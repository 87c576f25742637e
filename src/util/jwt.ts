/**
 * Reads the claims of a Cursor JWT without verifying it (docs/protocol.md §3.3). We only need `exp` to decide when
 * to refresh and `sub`/`email` to show who is logged in; the signature is the server's business. Nothing here throws:
 * junk in, `undefined` out, so callers can feed it whatever a credential file contained.
 */

/** The claims cursor-bridge reads from a Cursor access token. */
export interface JwtClaims {
  /** Expiry in seconds since the epoch. */
  exp?: number;
  /** `<provider>|user_<id>`, e.g. `auth0|user_01ABC` (§3.3). */
  sub?: string;
  /** Present on some tokens only. */
  email?: string;
}

/** Decodes base64url (padding optional) to bytes; undefined when the text is not base64url. */
export function base64UrlDecode(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(text)) return undefined;
  const base64 = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (base64.length % 4 === 1) return undefined;
  try {
    const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return undefined;
  }
}

/** Encodes bytes as base64url without padding (RFC 4648 §5), as PKCE and JWTs use. */
export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The JSON payload (second segment) of a JWT as a plain object, or undefined for anything that is not one. */
export function decodeJwtPayload(token: unknown): Record<string, unknown> | undefined {
  if (typeof token !== "string") return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || parts[1] === undefined || parts[1] === "") return undefined;
  const bytes = base64UrlDecode(parts[1]);
  if (bytes === undefined) return undefined;
  try {
    const payload: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
    return payload as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The `exp`, `sub` and `email` claims that are present and well-typed; undefined when the token is not a JWT. */
export function readJwtClaims(token: unknown): JwtClaims | undefined {
  const payload = decodeJwtPayload(token);
  if (payload === undefined) return undefined;
  const claims: JwtClaims = {};
  if (typeof payload.exp === "number" && Number.isFinite(payload.exp)) claims.exp = payload.exp;
  if (typeof payload.sub === "string" && payload.sub !== "") claims.sub = payload.sub;
  if (typeof payload.email === "string" && payload.email !== "") claims.email = payload.email;
  return claims;
}

/** The last token {@link jwtExpiresAtMs} read, and its answer: every turn asks about the same access token. */
let lastExpiry: { token: string; expiresAtMs: number | undefined } | undefined;

/** Expiry of a JWT in epoch milliseconds, or undefined when the token has no readable `exp`. */
export function jwtExpiresAtMs(token: unknown): number | undefined {
  if (typeof token === "string" && lastExpiry?.token === token) return lastExpiry.expiresAtMs;
  const exp = readJwtClaims(token)?.exp;
  const expiresAtMs = exp === undefined ? undefined : exp * 1000;
  if (typeof token === "string") lastExpiry = { token, expiresAtMs };
  return expiresAtMs;
}

/** The user id of a `sub` claim or poll `authId` (`auth0|user_01ABC` → `user_01ABC`, §3.1 step 6). */
export function userIdFromSubject(subject: string | undefined): string | undefined {
  if (subject === undefined || subject === "") return undefined;
  const bar = subject.lastIndexOf("|");
  const id = bar === -1 ? subject : subject.slice(bar + 1);
  return id === "" ? undefined : id;
}
