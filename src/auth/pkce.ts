/**
 * PKCE material for Cursor's browser "deep control" login (docs/protocol.md §3.1 steps 1–4). The official CLI uses a
 * 32-byte verifier (43 base64url chars); the challenge is base64url(SHA-256(verifier as ASCII)), both without padding.
 * Web Crypto only, so the plugin can run this under Bun as well.
 */
import { base64UrlEncode } from "../util/jwt.js";

/** Random sources, injectable so tests get deterministic values. */
export interface PkceRandom {
  /** @default crypto.getRandomValues */
  randomBytes?: (length: number) => Uint8Array;
  /** @default crypto.randomUUID */
  randomUUID?: () => string;
}

/** One login attempt's PKCE values. The verifier is secret until the poll completes. */
export interface PkcePair {
  verifier: string;
  challenge: string;
  uuid: string;
}

/** Bytes of randomness in the verifier, as the official CLI uses (§3.1 step 1). */
export const VERIFIER_BYTES = 32;

const defaultRandomBytes = (length: number): Uint8Array => crypto.getRandomValues(new Uint8Array(length));

/** base64url(SHA-256(ASCII verifier)), no padding (§3.1 step 2). */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64UrlEncode(new Uint8Array(digest));
}

/** A fresh verifier, its challenge and a random v4 uuid. */
export async function createPkcePair(random: PkceRandom = {}): Promise<PkcePair> {
  const randomBytes = random.randomBytes ?? defaultRandomBytes;
  const randomUUID = random.randomUUID ?? (() => crypto.randomUUID());
  const verifier = base64UrlEncode(randomBytes(VERIFIER_BYTES));
  return { verifier, challenge: await pkceChallenge(verifier), uuid: randomUUID() };
}

/**
 * The page the user opens to approve the login (§3.1 step 4):
 * `<websiteUrl>/loginDeepControl?challenge=…&uuid=…&mode=login&redirectTarget=cli`. Carries only the challenge, never
 * the verifier, so it is safe to print.
 */
export function buildLoginUrl(websiteUrl: string, pair: Pick<PkcePair, "challenge" | "uuid">): string {
  const url = new URL("loginDeepControl", websiteUrl.endsWith("/") ? websiteUrl : `${websiteUrl}/`);
  url.searchParams.set("challenge", pair.challenge);
  url.searchParams.set("uuid", pair.uuid);
  url.searchParams.set("mode", "login");
  url.searchParams.set("redirectTarget", "cli");
  return url.toString();
}
