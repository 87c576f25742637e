/**
 * The file conversation store's sweep (`deleteExpired`, hourly; conversation-store.ts has the design): expires
 * conversations and enforces the entry and size caps oldest first, from the log's headers and the legacy files' mtimes
 * alone (never reading a record), logs each removal with its reason, then compacts the log (log-compaction.ts).
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import type { LegacyFile, LegacyFiles } from "./legacy-files.js";
import type { LogMap } from "./log-map.js";
import type { RecordCache } from "./record-cache.js";
import { KIND_RECORD, KIND_TOMBSTONE } from "./record-log.js";

export interface SweepContext {
  dir: string;
  map: LogMap;
  legacy: LegacyFiles;
  cache: RecordCache;
  /** Appends a tombstone for `name` that shadows its entries up to `updatedAt` (conversation-store.ts). */
  bury(name: string, updatedAt: number): Promise<void>;
  compact(): Promise<void>;
  now: () => number;
  expired(updatedAt: number): boolean;
  maxEntries: number;
  maxTotalBytes: number;
  logger: Logger;
}

/** Removes expired conversations and the oldest beyond the caps, then compacts; resolves to how many it removed. */
export async function sweep(context: SweepContext): Promise<number> {
  const { map, legacy, cache, bury, now, expired, maxEntries, maxTotalBytes, logger } = context;
  const { entries } = map;
  const pathOf = (name: string) => join(context.dir, name);
  await map.scanned();
  await map.refreshOnce();
  const { files, temps } = await legacy.list();
  for (const temp of temps) if (expired(temp.mtimeMs)) await rm(pathOf(temp.fileName), { force: true });
  let removed = 0;
  const kept: Array<{ name: string; updatedAt: number; size: number; file?: LegacyFile }> = [];
  for (const file of files) {
    if (file.size === 0 || expired(file.mtimeMs)) {
      if (file.size === 0) logger.warn("removing an empty conversation file", { name: file.fileName });
      else logger.info("removing an expired conversation", { name: file.fileName, reason: "expired" });
      cache.delete(file.name);
      await rm(pathOf(file.fileName), { force: true });
      removed += 1;
    } else if (entries.has(file.name)) {
      // Saved to the log since (or removed there): the file is an older copy.
      await rm(pathOf(file.fileName), { force: true });
    } else kept.push({ name: file.name, updatedAt: file.mtimeMs, size: file.size, file });
  }
  for (const [name, found] of [...entries]) {
    if (!expired(found.updatedAt)) {
      if (found.kind === KIND_RECORD) kept.push({ name, updatedAt: found.updatedAt, size: found.payloadBytes });
      continue;
    }
    entries.delete(name);
    if (found.kind === KIND_TOMBSTONE) continue;
    logger.info("removing an expired conversation", { name, reason: "expired" });
    cache.delete(name);
    removed += 1;
  }
  kept.sort((a, b) => a.updatedAt - b.updatedAt);
  let total = kept.reduce((sum, item) => sum + item.size, 0);
  let count = kept.length;
  for (const item of kept) {
    if (count <= maxEntries && total <= maxTotalBytes) break;
    const reason = count > maxEntries ? "entry cap" : "size cap";
    logger.info("removing the oldest conversation", { name: item.name, reason, maxEntries, maxTotalBytes });
    cache.delete(item.name);
    if (item.file !== undefined) await legacy.remove(item.name);
    else await bury(item.name, Math.max(now(), item.updatedAt));
    count -= 1;
    total -= item.size;
    removed += 1;
  }
  await context.compact();
  return removed;
}
