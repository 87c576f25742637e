/**
 * The admin key (`--admin-key`, CURSOR_BRIDGE_ADMIN_KEY, or config `adminKey`): kept only as its SHA-256. The
 * environment or a flag may give the key itself or `sha256:<64 hex digits>`; the config file only the latter, so no
 * file on disk holds the key (`printf %s "$KEY" | sha256sum` prints the digits).
 */
import { createHash } from "node:crypto";
import { digestsEqual } from "../keys/key-material.js";

const HASHED = /^sha256:([0-9a-f]{64})$/i;

/** The hex SHA-256 an admin key setting stands for. */
export function adminKeyDigest(setting: string): string {
  const hashed = setting.match(HASHED)?.[1];
  return hashed?.toLowerCase() ?? createHash("sha256").update(setting, "utf8").digest("hex");
}

/** True when `presented` is the admin key whose digest is `digest` (constant-time). */
export function isAdminKey(presented: string, digest: string): boolean {
  return digestsEqual(createHash("sha256").update(presented, "utf8").digest("hex"), digest);
}
