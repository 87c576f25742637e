/**
 * The file conversation store's own segment of the record log (conversation-store.ts has the design): created on the
 * first save (exclusive create, 0600, in a 0700 directory), kept open, appended to by this store alone, one entry at a
 * time, and sealed and replaced once it is full. A save is one `writev` to a file that is already open: no file is
 * created per request. An append whose segment was removed under it goes again to a new segment.
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import { SYNC_WRITE_MAX_BYTES, writeAllSync, writeAllToFd, writeDirectOrPooled } from "./atomic-write.js";
import type { ActiveSegment, Located, OwnSegment, SegmentState } from "./log-map.js";
import {
  encodeHeader,
  HEADER_BYTES,
  type KIND_RECORD,
  KIND_SEALED,
  type KIND_TOMBSTONE,
  segmentName,
} from "./record-log.js";
import { claimTag, HOST } from "./segment-owner.js";
import { storeDir } from "./store-dir.js";

export interface SegmentWriterOptions {
  /** Directory of the log (created 0700 on the first append). */
  dir: string;
  /** The map's segments (log-map.ts): a segment this store opens or appends to is recorded there. */
  segments: Map<string, SegmentState>;
  /** A segment is sealed and a new one started once it holds this many bytes. */
  segmentBytes: number;
  now: () => number;
  logger: Logger;
}

export interface SegmentWriter extends OwnSegment {
  /** This store's segments it appends to no more (sealed or not: a failed append leaves no seal). */
  readonly retired: ReadonlySet<string>;
  /**
   * Appends one entry (its header and payload chunks: HEADER_BYTES + payloadBytes bytes) to this store's segment;
   * resolves to where it is.
   */
  appendEntry(chunks: Uint8Array[], located: Omit<Located, "segment" | "offset">): Promise<Located>;
  /** Appends an entry of `kind` for the conversation `name` (hex) with `payload`; resolves to where it is. */
  append(
    name: string,
    kind: typeof KIND_RECORD | typeof KIND_TOMBSTONE,
    updatedAt: number,
    payload: Uint8Array[],
  ): Promise<Located>;
}

export function createSegmentWriter(options: SegmentWriterOptions): SegmentWriter {
  const { segments, segmentBytes, now, logger } = options;
  const pathOf = (name: string) => join(options.dir, name);

  const directory = storeDir(options.dir);

  const tag = claimTag();
  let sequence = 0;
  let active: ActiveSegment | undefined;
  const retired = new Set<string>();
  let appending: Promise<unknown> = Promise.resolve();

  const openSegment = async (): Promise<ActiveSegment> => {
    await directory.ready();
    for (let attempt = 0; ; attempt++) {
      const name = segmentName(HOST, process.pid, tag, sequence++);
      try {
        const flags = constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_WRONLY;
        const fd = openSync(pathOf(name), flags, 0o600);
        fchmodSync(fd, 0o600);
        segments.set(name, { end: 0, sealed: false, broken: false });
        return { name, fd, size: 0 };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT" && attempt === 0) {
          // The directory was removed since: made again.
          directory.forget();
          await directory.ready();
        } else if (code !== "EEXIST") throw error;
      }
    }
  };

  const retire = (segment: ActiveSegment, seal: boolean) => {
    if (active === segment) active = undefined;
    retired.add(segment.name);
    const state = segments.get(segment.name);
    if (state !== undefined) state.sealed = true;
    try {
      if (seal) writeAllSync(segment.fd, [encodeHeader(KIND_SEALED, Buffer.alloc(32), now(), 0)]);
    } catch (error) {
      logger.warn("could not seal a conversation segment", { segment: segment.name, error });
    } finally {
      closeSync(segment.fd);
    }
  };

  const appendEntry = (chunks: Uint8Array[], located: Omit<Located, "segment" | "offset">): Promise<Located> => {
    const run = async (again = true): Promise<Located> => {
      active ??= await openSegment();
      const segment = active;
      const bytes = HEADER_BYTES + located.payloadBytes;
      try {
        const direct = () => writeAllSync(segment.fd, chunks);
        const pooled = () => writeAllToFd(segment.fd, chunks);
        await (bytes <= SYNC_WRITE_MAX_BYTES ? writeDirectOrPooled(direct, pooled) : pooled());
      } catch (error) {
        // Whatever part of the entry got out stays the segment's torn tail: nothing more goes after it.
        retire(segment, false);
        throw error;
      }
      if (again && fstatSync(segment.fd).nlink === 0) {
        // Removed under us (the directory cleared, or a process that took this one for dead compacted it): the
        // entry went to a file nobody will read, so it goes again to a new segment.
        retire(segment, false);
        return run(false);
      }
      // Written out, not `{ ...located, segment, offset }`: keys added to a spread copy cost a fresh hidden class.
      const found: Located = {
        payloadBytes: located.payloadBytes,
        updatedAt: located.updatedAt,
        kind: located.kind,
        segment: segment.name,
        offset: segment.size,
      };
      segment.size += bytes;
      const state = segments.get(segment.name);
      if (state !== undefined && state.end === found.offset) state.end = segment.size;
      if (segment.size >= segmentBytes) retire(segment, true);
      return found;
    };
    const result = appending.then(
      () => run(),
      () => run(),
    );
    appending = result.catch(() => undefined);
    return result;
  };

  const append = (
    name: string,
    kind: typeof KIND_RECORD | typeof KIND_TOMBSTONE,
    updatedAt: number,
    payload: Uint8Array[],
  ) => {
    const payloadBytes = payload.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    const header = encodeHeader(kind, Buffer.from(name, "hex"), updatedAt, payloadBytes);
    return appendEntry([header, ...payload], { payloadBytes, updatedAt, kind });
  };

  return {
    get active() {
      return active;
    },
    retired,
    retire,
    appendEntry,
    append,
  };
}
