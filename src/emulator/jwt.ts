/**
 * HS256 JSON Web Tokens for the emulator's auth routes. Claims follow the shape of Cursor's session tokens
 * (docs/protocol.md §3.3: `sub` = `<provider>|user_<id>`, `time`, `randomness`, `exp`, `iss`, `scope`, `aud`, `type`)
 * so a client's expiry logic sees what it would see against the real service.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { base64UrlDecode, base64UrlEncode, decodeJwtPayload } from "../util/jwt.js";

const HEADER = base64UrlEncode(new TextEncoder().encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
const ISSUER = "https://authentication.cursor.sh";
const AUDIENCE = "https://cursor.com";

/** Which of the pair a token is. Real refresh tokens are opaque to us; the `type` claim value `refresh` is ours. */
export type TokenKind = "session" | "refresh";

/** Identity carried in an emulator token. */
export interface TokenIdentity {
  userId: string;
  email?: string;
}

/** Claims the emulator signs. */
export interface EmulatorClaims extends TokenIdentity {
  kind: TokenKind;
  exp: number;
}

/** Signs and verifies the emulator's tokens with one secret. */
export interface JwtSigner {
  sign(identity: TokenIdentity, kind: TokenKind, expiresInSeconds: number): string;
  /** The claims of a well-signed, unexpired token; otherwise a reason. */
  verify(token: string): { ok: true; claims: EmulatorClaims } | { ok: false; reason: "invalid" | "expired" };
}

function hmac(secret: string, data: string): Uint8Array {
  return new Uint8Array(createHmac("sha256", secret).update(data).digest());
}

/** Creates a signer; `now` returns epoch milliseconds. */
export function createJwtSigner(secret: string, now: () => number = Date.now): JwtSigner {
  return {
    sign(identity, kind, expiresInSeconds) {
      const issuedAt = Math.floor(now() / 1000);
      const claims: Record<string, unknown> = {
        sub: `auth0|${identity.userId}`,
        time: String(issuedAt),
        randomness: randomness(),
        exp: issuedAt + expiresInSeconds,
        iss: ISSUER,
        scope: "openid profile email offline_access",
        aud: AUDIENCE,
        type: kind,
      };
      if (identity.email !== undefined) claims.email = identity.email;
      const payload = base64UrlEncode(new TextEncoder().encode(JSON.stringify(claims)));
      return `${HEADER}.${payload}.${base64UrlEncode(hmac(secret, `${HEADER}.${payload}`))}`;
    },
    verify(token) {
      const parts = token.split(".");
      if (parts.length !== 3 || parts[0] !== HEADER) return { ok: false, reason: "invalid" };
      const signature = base64UrlDecode(parts[2] ?? "");
      const expected = hmac(secret, `${parts[0]}.${parts[1]}`);
      if (signature === undefined || signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
        return { ok: false, reason: "invalid" };
      }
      const payload = decodeJwtPayload(token);
      const { sub, exp, type, email } = payload ?? {};
      if (typeof sub !== "string" || typeof exp !== "number" || (type !== "session" && type !== "refresh")) {
        return { ok: false, reason: "invalid" };
      }
      if (exp * 1000 <= now()) return { ok: false, reason: "expired" };
      const userId = sub.slice(sub.lastIndexOf("|") + 1);
      const claims: EmulatorClaims = { userId, kind: type, exp };
      if (typeof email === "string") claims.email = email;
      return { ok: true, claims };
    },
  };
}

/** 18 characters shaped `xxxxxxxx-xxxx-xxxx` like the real `randomness` claim (§3.3). */
function randomness(): string {
  const hex = randomBytes(8).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}`;
}
