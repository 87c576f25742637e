/**
 * Who owns a segment of the file conversation store's record log, and whether that owner may still append to it
 * (conversation-store.ts has the design). A segment's name carries its owner's host, pid and tag (record-log.ts);
 * compaction may touch only a segment nobody appends to any more, and this is where that is decided: one module, so
 * the tags of this process's stores and this host's hash are one set and one value however many stores it opens.
 */
import { createHash, randomBytes } from "node:crypto";
import { hostname } from "node:os";

/** Tags of the store instances of this process (a segment with this pid and another tag is a previous process's). */
const ownTags = new Set<string>();

/** This host's part of a segment name (record-log.ts): its pids mean nothing on another host or in a container. */
export const HOST = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);

/** A new tag for a store instance of this process; segments named with it count as this process's from now on. */
export function claimTag(): string {
  const tag = randomBytes(4).toString("hex");
  ownTags.add(tag);
  return tag;
}

/**
 * Whether the owner of a segment may still append to it: a store of this process, or a process `pid` of this host
 * that exists (EPERM: it does, as another user's). A segment with this process's pid and a tag of none of its stores
 * was left by an earlier process with the same pid (a container's serve is pid 1 at every start). A segment of
 * another host (another machine on a shared directory, or a container: its own host name and pids) counts as alive
 * until it has had no append for longer than the conversations' TTL, when everything in it has expired.
 */
export function alive(
  owner: { host: string | undefined; pid: number; tag: string },
  quietForMs: () => number,
  ttlMs: number,
) {
  if (owner.host !== undefined && owner.host !== HOST) return quietForMs() <= ttlMs;
  if (owner.pid === process.pid) return ownTags.has(owner.tag);
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
