/**
 * Keys derived from the cluster secret (HKDF-SHA256, one label per use), so every instance signs and verifies the
 * same way: requests between instances carry `x-cursor-bridge-cluster: t=<ms>,s=<HMAC of t and the body>` (rejected
 * when stale or wrong), and what instances sign for clients (thinking signatures) verifies on all of them.
 */
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

export const CLUSTER_HEADER = "x-cursor-bridge-cluster";

/** A 32-byte key for one purpose (`label`), derived from the shared secret. */
export function deriveKey(secret: string, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "cursor-bridge cluster", label, 32));
}

/** Signs and verifies requests between instances. */
export interface ClusterAuth {
  sign(body: string, now?: number): string;
  /** True when `header` signs `body` and is at most `maxSkewMs` old. */
  verify(body: string, header: string | undefined, now?: number): boolean;
}

/** Creates the request signer of a cluster secret. */
export function createClusterAuth(secret: string, maxSkewMs = 60_000): ClusterAuth {
  const key = deriveKey(secret, "forwarded requests");
  const mac = (t: string, body: string) => createHmac("sha256", key).update(`${t}.`).update(body).digest("base64url");
  return {
    sign(body, now = Date.now()) {
      const t = String(now);
      return `t=${t},s=${mac(t, body)}`;
    },
    verify(body, header, now = Date.now()) {
      const match = /^t=(\d+),s=([A-Za-z0-9_-]+)$/.exec(header ?? "");
      if (match === null) return false;
      const [, t = "", given = ""] = match;
      if (Math.abs(now - Number(t)) > maxSkewMs) return false;
      const expected = Buffer.from(mac(t, body));
      const actual = Buffer.from(given);
      return expected.length === actual.length && timingSafeEqual(expected, actual);
    },
  };
}
