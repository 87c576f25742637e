/**
 * Compaction of the file conversation store's record log (conversation-store.ts has the design): a segment nobody
 * appends to any more (sealed by its owner, or its owner is gone: segment-owner.ts) whose live entries are under half
 * its bytes gets them re-appended to this store's own segment and is removed; one with nothing live is removed at
 * once. Superseded entries so take at most about as many bytes again as the live ones.
 */
import type { Stats } from "node:fs";
import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import { isMissing, type LogMap, readEntry } from "./log-map.js";
import { HEADER_BYTES, ownerOf } from "./record-log.js";
import { alive } from "./segment-owner.js";
import type { SegmentWriter } from "./segment-writer.js";

export interface CompactionContext {
  dir: string;
  map: LogMap;
  writer: SegmentWriter;
  now: () => number;
  /** The conversations' TTL: another host's segment quiet for longer holds nothing live. */
  ttlMs: number;
  logger: Logger;
}

/** Re-appends the live entries of segments nobody appends to any more, and removes those segments. */
export async function compact(context: CompactionContext): Promise<void> {
  const { map, writer, now, ttlMs, logger } = context;
  const { entries, segments } = map;
  const pathOf = (name: string) => join(context.dir, name);
  const live = new Map<string, number>();
  for (const found of entries.values()) {
    live.set(found.segment, (live.get(found.segment) ?? 0) + HEADER_BYTES + found.payloadBytes);
  }
  for (const [segment, state] of [...segments]) {
    if (segment === writer.active?.name) continue;
    let info: Stats;
    try {
      info = await lstat(pathOf(segment));
    } catch (error) {
      if (isMissing(error)) continue;
      throw error;
    }
    const owner = ownerOf(segment);
    const quietForMs = () => now() - info.mtimeMs;
    if (!state.sealed && !writer.retired.has(segment) && owner !== undefined && alive(owner, quietForMs, ttlMs)) {
      continue;
    }
    const size = info.size;
    const liveBytes = live.get(segment) ?? 0;
    if (liveBytes > 0 && liveBytes >= size / 2) continue;
    let copied = 0;
    for (const [name, found] of [...entries]) {
      if (found.segment !== segment) continue;
      let bytes: Buffer;
      try {
        bytes = await readEntry(context.dir, found, true);
      } catch (error) {
        if (isMissing(error)) return; // another process compacted it first: its copies are found by a refresh
        throw error;
      }
      const moved = await writer.appendEntry([bytes], found);
      if (entries.get(name) === found) entries.set(name, moved);
      copied += 1;
    }
    await rm(pathOf(segment), { force: true });
    segments.delete(segment);
    logger.debug("compacted a conversation segment", { segment, bytes: size, liveBytes, entries: copied });
  }
}
