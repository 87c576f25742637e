/**
 * Keys derived from the cluster secret (HKDF-SHA256, one label per use), so every instance signs and verifies the
 * same way: requests between instances carry `x-cursor-bridge-cluster: t=<ms>,n=<nonce>,s=<HMAC of t, n and the
 * body>` (rejected when stale, wrong, or already seen: each nonce is kept in the shared store until its window ends,
 * so a captured request cannot be replayed), and what instances sign for clients (thinking signatures) verifies on
 * all of them.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";

export const CLUSTER_HEADER = "x-cursor-bridge-cluster";

/** A 32-byte key for one purpose (`label`), derived from the shared secret. */
export function deriveKey(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "cursor-bridge cluster", label, 32));
}

/** Nonces of accepted requests, each kept until its signature's window ends. */
export interface NonceStore {
  /** True the first time `nonce` is claimed within `ttlMs`; false for a replay. */
  claim(nonce: string, ttlMs: number): Promise<boolean>;
}

/** A per-process nonce store (one instance, or tests); the cluster uses the shared store's. */
export function createMemoryNonceStore(now: () => number = Date.now): NonceStore {
  const until = new Map<string, number>();
  return {
    async claim(nonce, ttlMs) {
      const at = now();
      for (const [seen, expires] of until) {
        if (expires > at) break;
        until.delete(seen);
      }
      const expires = until.get(nonce);
      if (expires !== undefined && expires > at) return false;
      until.delete(nonce);
      until.set(nonce, at + ttlMs);
      return true;
    },
  };
}

/** Signs and verifies requests between instances. */
export interface ClusterAuth {
  sign(body: string, now?: number): string;
  /** True when `header` signs `body` and is at most `maxSkewMs` old (signature only; see {@link accept}). */
  verify(body: string, header: string | undefined, now?: number): boolean;
  /** {@link verify}, and the header's nonce was never accepted before (a replay is refused). */
  accept(body: string, header: string | undefined, now?: number): Promise<boolean>;
}

export interface ClusterAuthOptions {
  /** @default 60_000 */
  maxSkewMs?: number;
  /** @default a per-process store */
  nonces?: NonceStore;
}

const HEADER_PATTERN = /^t=(\d+),n=([A-Za-z0-9_-]{16,64}),s=([A-Za-z0-9_-]+)$/;

/** Creates the request signer of a cluster secret. */
export function createClusterAuth(secret: string, options: ClusterAuthOptions = {}): ClusterAuth {
  const maxSkewMs = options.maxSkewMs ?? 60_000;
  const nonces = options.nonces ?? createMemoryNonceStore();
  const key = deriveKey(secret, "forwarded requests");
  const mac = (t: string, nonce: string, body: string) =>
    createHmac("sha256", key).update(`${t}.${nonce}.`).update(body).digest("base64url");
  const check = (body: string, header: string | undefined, now: number) => {
    const match = HEADER_PATTERN.exec(header ?? "");
    if (match === null) return undefined;
    const [, t = "", nonce = "", given = ""] = match;
    if (Math.abs(now - Number(t)) > maxSkewMs) return undefined;
    const expected = Buffer.from(mac(t, nonce, body));
    const actual = Buffer.from(given);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    // Kept until the signature's window ends (t + skew), and a second longer for clocks that disagree a little.
    return { nonce, ttlMs: Number(t) + maxSkewMs - now + 1000 };
  };
  return {
    sign(body, now = Date.now()) {
      const t = String(now);
      const nonce = randomBytes(18).toString("base64url");
      return `t=${t},n=${nonce},s=${mac(t, nonce, body)}`;
    },
    verify(body, header, now = Date.now()) {
      return check(body, header, now) !== undefined;
    },
    async accept(body, header, now = Date.now()) {
      const checked = check(body, header, now);
      if (checked === undefined) return false;
      return nonces.claim(checked.nonce, checked.ttlMs);
    },
  };
}
