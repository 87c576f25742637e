/**
 * The file conversation store's map of its record log (conversation-store.ts has the design): where the newest entry
 * of each conversation is, and how far each segment has been read. It is built from the segments' headers on first
 * use and brought up to date when a lookup misses (another process's segments and tails), so a load reads one entry
 * and the sweep decides from headers alone. What this store appends itself goes into the map as it is written
 * (segment-writer.ts); this module only reads.
 */
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import {
  HEADER_BYTES,
  type KIND_RECORD,
  KIND_SEALED,
  KIND_TOMBSTONE,
  SEGMENT_NAME,
  scanSegment,
} from "./record-log.js";

/** Where the newest entry of a conversation is. */
export interface Located {
  segment: string;
  /** Offset of the entry's header. */
  offset: number;
  payloadBytes: number;
  updatedAt: number;
  kind: typeof KIND_RECORD | typeof KIND_TOMBSTONE;
}

/** What this store knows of a segment. */
export interface SegmentState {
  /** Scanned up to here (the end of its last complete entry). */
  end: number;
  /** Its owner appends no more (a seal entry, or this store gave it up). */
  sealed: boolean;
  /** A header that does not check out: nothing after `end` is read. */
  broken: boolean;
}

/** This store's own segment, open for appending. */
export interface ActiveSegment {
  name: string;
  fd: number;
  size: number;
}

/** What the map needs of the store's own segment (segment-writer.ts): it is not rescanned, and not kept when gone. */
export interface OwnSegment {
  readonly active: ActiveSegment | undefined;
  /** Gives up this store's segment: sealed (when `seal`), closed, never appended to again. */
  retire(segment: ActiveSegment, seal: boolean): void;
}

export interface LogMapOptions {
  dir: string;
  /** Shared with segment-writer.ts, which records the segments it opens and what it appends to them. */
  segments: Map<string, SegmentState>;
  own: OwnSegment;
  /** Told every name in the directory at each refresh (legacy-files.ts). */
  legacy: { noteDirectory(names: readonly string[]): void };
  logger: Logger;
}

export interface LogMap {
  /** The newest entry of each conversation, by file name (the hex SHA-256 of its id). */
  readonly entries: Map<string, Located>;
  readonly segments: Map<string, SegmentState>;
  /** One refresh at a time; callers arriving while one runs share the next. `full` rebuilds the map. */
  refreshOnce(full?: boolean): Promise<void>;
  /** The first full scan, once (tried again at the next call after it failed). */
  scanned(): Promise<void>;
}

export const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

/** The bytes of the entry at `found` in `dir`: its payload, with its header in front when `withHeader`. */
export async function readEntry(dir: string, found: Located, withHeader: boolean): Promise<Buffer> {
  const file = await open(join(dir, found.segment), "r");
  try {
    const start = withHeader ? found.offset : found.offset + HEADER_BYTES;
    const length = found.payloadBytes + (withHeader ? HEADER_BYTES : 0);
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await file.read(bytes, 0, length, start);
    if (bytesRead !== length) throw new Error(`short read of a conversation entry in ${found.segment}`);
    return bytes;
  } finally {
    await file.close();
  }
}

export function createLogMap(options: LogMapOptions): LogMap {
  const { segments, own, legacy, logger } = options;
  const entries = new Map<string, Located>();
  const pathOf = (name: string) => join(options.dir, name);

  /** Takes `found` into the map when it is newer than what the map holds (conversation-store.ts says how ties go). */
  const consider = (name: string, found: Located) => {
    const current = entries.get(name);
    if (current === undefined || found.updatedAt > current.updatedAt) entries.set(name, found);
    else if (found.updatedAt < current.updatedAt) return;
    else if (current.segment === found.segment ? found.offset > current.offset : found.kind === KIND_TOMBSTONE) {
      entries.set(name, found);
    }
  };

  const scanInto = async (segment: string, state: SegmentState) => {
    let scan: Awaited<ReturnType<typeof scanSegment>>;
    try {
      scan = await scanSegment(pathOf(segment), state.end);
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    for (const entry of scan.entries) {
      if (entry.kind === KIND_SEALED) state.sealed = true;
      else {
        const { offset, payloadBytes, updatedAt, kind } = entry;
        consider(entry.name, { segment, offset, payloadBytes, updatedAt, kind });
      }
    }
    if (scan.end > state.end) state.end = scan.end;
    if (scan.broken && !state.broken) {
      state.broken = true;
      logger.warn("ignoring the rest of a conversation segment that does not read as entries", {
        segment,
        offset: scan.end,
      });
    }
    return true;
  };

  /**
   * Brings the map up to date with the directory: new segments and grown tails are scanned; when a segment it knew
   * is gone (compacted by another process) or `full`, the map is rebuilt from every segment.
   */
  const refresh = async (full: boolean) => {
    const activeBefore = own.active;
    let names: string[];
    try {
      names = await readdir(options.dir);
    } catch (error) {
      if (!isMissing(error)) throw error;
      names = [];
    }
    const present = new Set(names.filter((name) => SEGMENT_NAME.test(name)));
    legacy.noteDirectory(names);
    if (activeBefore !== undefined && own.active === activeBefore && !present.has(activeBefore.name)) {
      // Our own segment was removed under us (the directory was cleared): the next save starts a new one.
      own.retire(activeBefore, false);
    }
    let rebuild = full;
    for (const known of segments.keys()) if (!present.has(known)) rebuild = true;
    if (rebuild) {
      entries.clear();
      segments.clear();
    }
    for (const segment of present) {
      let state = segments.get(segment);
      if (state === undefined) {
        state = { end: 0, sealed: false, broken: false };
        segments.set(segment, state);
      } else if (state.broken || (segment === own.active?.name && !rebuild)) continue;
      if (!(await scanInto(segment, state))) segments.delete(segment);
    }
  };

  let refreshing: Promise<void> | undefined;
  let refreshQueued: Promise<void> | undefined;
  const refreshOnce = (full = false): Promise<void> => {
    if (refreshing === undefined) {
      refreshing = refresh(full).finally(() => {
        refreshing = undefined;
      });
      return refreshing;
    }
    refreshQueued ??= refreshing
      .catch(() => undefined)
      .then(() => {
        refreshQueued = undefined;
        return refreshOnce(full);
      });
    return refreshQueued;
  };
  let firstScan: Promise<void> | undefined;
  const scanned = () => {
    firstScan ??= refreshOnce(true).catch((error: unknown) => {
      firstScan = undefined;
      throw error;
    });
    return firstScan;
  };

  return { entries, segments, refreshOnce, scanned };
}
