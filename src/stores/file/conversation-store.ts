/**
 * File implementation of {@link ConversationStore}, the embedded default: an append-only record log under `dir`.
 *
 * Why a log: a file per conversation (what this store kept until 2026-11) made every save create an inode (temp file
 * and rename), and on a file system under heavy deletion (the benchmark VM's ext4 without a journal) creating a file
 * costs 0.3–1 ms of kernel CPU, the largest single cost of a request in serve (docs/performance.md). A save is now
 * one `writev` appended to a file that is already open.
 *
 * Layout (record-log.ts has the bytes): segment files `records-<host>-<pid>-<tag>-<seq>.log`, 0600 in the 0700 `dir`. Each
 * store instance (a process: `serve`, and every `acp` an editor starts, may share one data directory) creates its own
 * segment (exclusive create, append-only) on its first save and keeps it open; a segment past `segmentBytes` (64 MiB)
 * gets a "sealed" entry and the next save starts a new one. Only the owner ever appends to a segment, so appends of
 * different processes never interleave and need no lock, and a crash can tear only the owner's last entry, which
 * nobody appends after (the restarted process writes a segment of its own). An entry is a small header (the SHA-256
 * of the conversation id, which also names a legacy `<hex>.json` file; kind record or tombstone; `updatedAt`) and the
 * record in record-file.ts's format 2. A save's promise resolves once its append has returned, so a kill -9 after
 * that loses nothing (the bytes are in the kernel's page cache, as the renamed file of before was; neither fsyncs).
 *
 * Reading: a map name → newest entry (segment, offset, size, `updatedAt`), built on first use (not at start) by
 * reading the segments' headers and skipping payloads. The newest `updatedAt` wins across segments (in one segment,
 * the later entry on a tie; across segments, a tombstone); a tombstone removes. A load the map cannot answer first
 * looks for what is new (new segments, grown tails), so a conversation another process saved is found; a read whose
 * segment is gone (compacted by another process) rebuilds the map and tries once more. A payload that fails to decode
 * is logged and shadowed by a tombstone, as a corrupt file was removed before.
 *
 * The sweep (`deleteExpired`, hourly) expires entries by their headers and enforces the entry and size caps oldest
 * first (a tombstone for each removal, each logged with its reason), then compacts: a segment nobody appends to any
 * more (sealed by its owner, or its owner's pid is gone) whose live entries are under half its bytes gets them
 * re-appended to this store's own segment and is removed; one with nothing live is removed at once. A segment whose
 * owner is alive and has not sealed it is never touched (its owner could still append to it); a segment with this
 * process's pid but the tag of none of its stores is an earlier process's (a container's serve is pid 1 at every
 * start). Two processes compacting the same segment at once each copy its live entries (duplicates with equal
 * `updatedAt`, harmless) and remove it once. As a safety net, the owner checks after each append that its segment is
 * still linked and appends the entry again to a new segment if it is not. Pids are compared on one host only: a
 * segment name carries a hash of its owner's host name, and a segment of another host (a machine sharing the
 * directory, a container with its own pids) is left alone until it has had no append for longer than the TTL, when
 * all it holds has expired; its owner, were it still running, would then append again to a new segment.
 *
 * Legacy: `<hex>.json` files (one per conversation, record-file.ts's formats 1 and 2) are still read when the log has
 * no entry for a conversation; its next save goes to the log and removes the file; the sweep expires and caps them
 * by their mtime (their `updatedAt`) as before, removes the ones the log shadows, and removes stale `.tmp` leftovers.
 *
 * Off the hot path, as before: recently used records stay in a bounded memory cache, a save that changes nothing
 * writes nothing, and saves of one conversation queued behind a running write are coalesced into one append of the
 * newest record.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Dirent, Stats } from "node:fs";
import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import { silentLogger } from "../../util/logger.js";
import { pruneRecord } from "../blob-graph.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationStoreOptions,
  DEFAULT_CONVERSATION_TTL_MS,
} from "../types.js";
import { SYNC_WRITE_MAX_BYTES, writeAllSync, writeAllToFd, writeDirectOrPooled } from "./atomic-write.js";
import { encodeRecord } from "./record-file.js";
import {
  encodeHeader,
  HEADER_BYTES,
  KIND_RECORD,
  KIND_SEALED,
  KIND_TOMBSTONE,
  ownerOf,
  SEGMENT_NAME,
  scanSegment,
  segmentName,
} from "./record-log.js";

/** Options of {@link createFileConversationStore}. */
export interface FileConversationStoreOptions extends ConversationStoreOptions {
  /** Directory holding the record log (created 0700). */
  dir: string;
  logger?: Logger;
  /**
   * Most bytes of live records kept; the sweep removes the oldest beyond it. The log's superseded entries take up to
   * as much again until compaction, plus each process's open segment (under `segmentBytes`). @default 1 GiB
   */
  maxTotalBytes?: number;
  /** Memory for recently used records; a record larger than a quarter of it is not cached. @default 8 MiB */
  cacheBytes?: number;
  /** A segment is sealed and a new one started once it holds this many bytes. @default 64 MiB */
  segmentBytes?: number;
}

/** The record reader (record-decode.ts, with zod), loaded on the store's first read rather than at start. */
let decoder: Promise<typeof import("./record-decode.js")["decodeRecord"]> | undefined;
const recordDecoder = () => {
  decoder ??= import("./record-decode.js").then((module) => module.decodeRecord);
  return decoder;
};

/** The hex SHA-256 of a conversation id: the key of its log entries and the name of its legacy file. */
function nameOf(conversationId: string): string {
  return createHash("sha256").update(conversationId).digest("hex");
}

const LEGACY_NAME = /^([0-9a-f]{64})\.json$/;

/** Same content as far as a continuation is concerned (updatedAt aside). */
function sameRecord(a: ConversationRecord | undefined, b: ConversationRecord): boolean {
  if (a === undefined || a.coveredMessages !== b.coveredMessages || a.fingerprint !== b.fingerprint) return false;
  if (a.blobs.size !== b.blobs.size || !Buffer.from(a.checkpoint).equals(Buffer.from(b.checkpoint))) return false;
  for (const id of b.blobs.keys()) if (!a.blobs.has(id)) return false;
  return true;
}

/**
 * What a cached record costs in memory, not just its bytes: each record and each blob is also a handful of objects
 * (the record, its Map, a 64-character hex key, a Uint8Array and its backing store). Counting the bytes alone let a
 * cache of small records hold several times its budget (a soak of 12,000 short conversations kept most of them).
 */
const RECORD_OVERHEAD_BYTES = 512;
const BLOB_OVERHEAD_BYTES = 256;

/** What {@link RecordCache} charges for `record`. */
export function sizeOf(record: ConversationRecord): number {
  let bytes = record.checkpoint.byteLength + RECORD_OVERHEAD_BYTES;
  for (const blob of record.blobs.values()) bytes += blob.byteLength + BLOB_OVERHEAD_BYTES;
  return bytes;
}

/** Records by file name, least recently used first, bounded by their byte size. */
class RecordCache {
  private readonly records = new Map<string, ConversationRecord>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(name: string): ConversationRecord | undefined {
    const record = this.records.get(name);
    if (record !== undefined) {
      this.records.delete(name);
      this.records.set(name, record);
    }
    return record;
  }

  set(name: string, record: ConversationRecord): void {
    this.delete(name);
    const size = sizeOf(record);
    if (size > this.maxBytes / 4) return;
    this.records.set(name, record);
    this.bytes += size;
    for (const [oldest, value] of this.records) {
      if (this.bytes <= this.maxBytes) break;
      this.records.delete(oldest);
      this.bytes -= sizeOf(value);
    }
  }

  delete(name: string): void {
    const record = this.records.get(name);
    if (record === undefined) return;
    this.records.delete(name);
    this.bytes -= sizeOf(record);
  }
}

interface QueuedSave {
  record: ConversationRecord;
  done: Promise<void>;
}

/** Where the newest entry of a conversation is. */
interface Located {
  segment: string;
  /** Offset of the entry's header. */
  offset: number;
  payloadBytes: number;
  updatedAt: number;
  kind: typeof KIND_RECORD | typeof KIND_TOMBSTONE;
}

/** What this store knows of a segment. */
interface SegmentState {
  /** Scanned up to here (the end of its last complete entry). */
  end: number;
  /** Its owner appends no more (a seal entry, or this store gave it up). */
  sealed: boolean;
  /** A header that does not check out: nothing after `end` is read. */
  broken: boolean;
}

/** This store's own segment, open for appending. */
interface ActiveSegment {
  name: string;
  fd: number;
  size: number;
}

interface LegacyFile {
  name: string;
  fileName: string;
  mtimeMs: number;
  size: number;
}

/** Tags of the store instances of this process (a segment with this pid and another tag is a previous process's). */
const ownTags = new Set<string>();

/** This host's part of a segment name (record-log.ts): its pids mean nothing on another host or in a container. */
const HOST = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);

/**
 * Whether the owner of a segment may still append to it: a store of this process, or a process `pid` of this host
 * that exists (EPERM: it does, as another user's). A segment with this process's pid and a tag of none of its stores
 * was left by an earlier process with the same pid (a container's serve is pid 1 at every start). A segment of
 * another host (another machine on a shared directory, or a container: its own host name and pids) counts as alive
 * until it has had no append for longer than the conversations' TTL, when everything in it has expired.
 */
function alive(owner: { host: string | undefined; pid: number; tag: string }, quietForMs: () => number, ttlMs: number) {
  if (owner.host !== undefined && owner.host !== HOST) return quietForMs() <= ttlMs;
  if (owner.pid === process.pid) return ownTags.has(owner.tag);
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException).code === "ENOENT";

/** Creates the file-backed conversation store. */
export function createFileConversationStore(options: FileConversationStoreOptions): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const maxEntries = options.maxEntries ?? 10_000;
  const maxTotalBytes = options.maxTotalBytes ?? 1024 * 1024 * 1024;
  const segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  const cache = new RecordCache(options.cacheBytes ?? 8 * 1024 * 1024);
  const queued = new Map<string, QueuedSave>();
  const writing = new Map<string, Promise<void>>();
  const pathOf = (name: string) => join(options.dir, name);
  const expired = (updatedAt: number) => now() - updatedAt > ttlMs;

  let dirReady: Promise<void> | undefined;
  const ensureDir = () => {
    dirReady ??= (async () => {
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
      await chmod(options.dir, 0o700);
    })();
    return dirReady;
  };

  // ---- the map, and scanning the segments into it

  const entries = new Map<string, Located>();
  const segments = new Map<string, SegmentState>();
  /** Names of legacy `<hex>.json` files seen by the last scan of the directory. */
  const legacy = new Set<string>();

  /** Takes `found` into the map when it is newer than what the map holds (see the module comment for ties). */
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
    const activeBefore = active;
    let names: string[];
    try {
      names = await readdir(options.dir);
    } catch (error) {
      if (!isMissing(error)) throw error;
      names = [];
    }
    const present = new Set(names.filter((name) => SEGMENT_NAME.test(name)));
    legacy.clear();
    for (const name of names) {
      const match = LEGACY_NAME.exec(name);
      if (match?.[1] !== undefined) legacy.add(match[1]);
    }
    if (activeBefore !== undefined && active === activeBefore && !present.has(activeBefore.name)) {
      // Our own segment was removed under us (the directory was cleared): the next save starts a new one.
      retire(activeBefore, false);
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
      } else if (state.broken || (segment === active?.name && !rebuild)) continue;
      if (!(await scanInto(segment, state))) segments.delete(segment);
    }
  };

  let refreshing: Promise<void> | undefined;
  let refreshQueued: Promise<void> | undefined;
  /** One refresh at a time; callers arriving while one runs share the next. */
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

  // ---- appending to this store's own segment

  const tag = randomBytes(4).toString("hex");
  ownTags.add(tag);
  let sequence = 0;
  let active: ActiveSegment | undefined;
  /** This store's segments it appends to no more (sealed or not: a failed append leaves no seal). */
  const retired = new Set<string>();
  let appending: Promise<unknown> = Promise.resolve();

  const openSegment = async (): Promise<ActiveSegment> => {
    await ensureDir();
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
          dirReady = undefined;
          await ensureDir();
        } else if (code !== "EEXIST") throw error;
      }
    }
  };

  /** Gives up this store's segment: sealed (when `seal`), closed, never appended to again. */
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

  /**
   * Appends one entry (its header and payload chunks: HEADER_BYTES + payloadBytes bytes) to this store's segment;
   * resolves to where it is.
   */
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
      const found: Located = { ...located, segment: segment.name, offset: segment.size };
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

  /** Appends a tombstone for `name` that shadows its entries up to `updatedAt` (a tie goes to the tombstone). */
  const bury = async (name: string, updatedAt: number) => {
    const found = await append(name, KIND_TOMBSTONE, updatedAt, []);
    const current = entries.get(name);
    if (current === undefined || current.updatedAt <= updatedAt) entries.set(name, found);
  };

  const removeLegacy = async (name: string) => {
    legacy.delete(name);
    await rm(pathOf(`${name}.json`), { force: true });
  };

  const write = async (name: string, record: ConversationRecord) => {
    const found = await append(name, KIND_RECORD, record.updatedAt, encodeRecord(record));
    entries.set(name, found);
    if (legacy.has(name)) await removeLegacy(name);
  };

  /** Queues the newest record of a conversation behind its running write; one write per queue. */
  const enqueue = (name: string, record: ConversationRecord): Promise<void> => {
    const pending = queued.get(name);
    if (pending !== undefined) {
      pending.record = record;
      return pending.done;
    }
    const slot: QueuedSave = { record, done: Promise.resolve() };
    slot.done = (async () => {
      await writing.get(name)?.catch(() => undefined);
      queued.delete(name);
      const running = write(name, slot.record);
      writing.set(name, running);
      try {
        await running;
      } finally {
        if (writing.get(name) === running) writing.delete(name);
      }
    })();
    queued.set(name, slot);
    return slot.done;
  };

  // ---- reading

  const readEntry = async (found: Located, withHeader: boolean): Promise<Buffer> => {
    const file = await open(pathOf(found.segment), "r");
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
  };

  /** The record in `bytes`, or undefined after `drop` removed what does not decode (logged there, with its place). */
  const decodeOrDrop = async (bytes: Buffer, drop: (error: unknown) => Promise<void>) => {
    const decodeRecord = await recordDecoder();
    try {
      return decodeRecord(bytes);
    } catch (error) {
      await drop(error);
      return undefined;
    }
  };

  /** The newest stored record of `name` (log first, then a legacy file), not checked for expiry. */
  const readStored = async (name: string): Promise<ConversationRecord | undefined> => {
    await scanned();
    if (!entries.has(name)) await refreshOnce();
    let found = entries.get(name);
    if (found === undefined) return readLegacy(name);
    if (found.kind === KIND_TOMBSTONE) return undefined;
    let bytes: Buffer;
    try {
      bytes = await readEntry(found, false);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Compacted by another process: its live entries are in another segment now.
      await refreshOnce(true);
      found = entries.get(name);
      if (found?.kind !== KIND_RECORD) return found === undefined ? readLegacy(name) : undefined;
      bytes = await readEntry(found, false);
    }
    const entry = found;
    return decodeOrDrop(bytes, async (error) => {
      logger.warn("removing a corrupt conversation record", { name, segment: entry.segment, error });
      await bury(name, entry.updatedAt);
    });
  };

  const readLegacy = async (name: string): Promise<ConversationRecord | undefined> => {
    if (!legacy.has(name)) return undefined;
    let bytes: Buffer;
    try {
      bytes = await readFile(pathOf(`${name}.json`));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return decodeOrDrop(bytes, async (error) => {
      logger.warn("removing a corrupt conversation file", { name: `${name}.json`, error });
      await removeLegacy(name);
    });
  };

  // ---- the sweep

  const listLegacy = async (): Promise<{ files: LegacyFile[]; temps: LegacyFile[] }> => {
    let dirents: Dirent[];
    try {
      dirents = await readdir(options.dir, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return { files: [], temps: [] };
      throw error;
    }
    const files: LegacyFile[] = [];
    const temps: LegacyFile[] = [];
    for (const dirent of dirents) {
      const fileName = dirent.name;
      if (!fileName.endsWith(".json") && !fileName.endsWith(".tmp")) continue;
      if (!dirent.isFile()) {
        logger.warn("skipping an entry of the conversation directory that is not a file", { name: fileName });
        continue;
      }
      const info = await lstat(pathOf(fileName)).catch((error: unknown) => {
        logger.warn("skipping an unreadable entry of the conversation directory", { name: fileName, error });
        return undefined;
      });
      if (info === undefined) continue;
      const file = { name: fileName.replace(/\.json$/, ""), fileName, mtimeMs: info.mtimeMs, size: info.size };
      (fileName.endsWith(".tmp") ? temps : files).push(file);
    }
    return { files, temps };
  };

  /** Re-appends the live entries of segments nobody appends to any more, and removes those segments. */
  const compact = async () => {
    const live = new Map<string, number>();
    for (const found of entries.values()) {
      live.set(found.segment, (live.get(found.segment) ?? 0) + HEADER_BYTES + found.payloadBytes);
    }
    for (const [segment, state] of [...segments]) {
      if (segment === active?.name) continue;
      let info: Stats;
      try {
        info = await lstat(pathOf(segment));
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      const owner = ownerOf(segment);
      const quietForMs = () => now() - info.mtimeMs;
      if (!state.sealed && !retired.has(segment) && owner !== undefined && alive(owner, quietForMs, ttlMs)) continue;
      const size = info.size;
      const liveBytes = live.get(segment) ?? 0;
      if (liveBytes > 0 && liveBytes >= size / 2) continue;
      let copied = 0;
      for (const [name, found] of [...entries]) {
        if (found.segment !== segment) continue;
        let bytes: Buffer;
        try {
          bytes = await readEntry(found, true);
        } catch (error) {
          if (isMissing(error)) return; // another process compacted it first: its copies are found by a refresh
          throw error;
        }
        const moved = await appendEntry([bytes], found);
        if (entries.get(name) === found) entries.set(name, moved);
        copied += 1;
      }
      await rm(pathOf(segment), { force: true });
      segments.delete(segment);
      logger.debug("compacted a conversation segment", { segment, bytes: size, liveBytes, entries: copied });
    }
  };

  return {
    async load(conversationId) {
      const name = nameOf(conversationId);
      const record = cache.get(name) ?? (await readStored(name));
      if (record === undefined || record.conversationId !== conversationId || expired(record.updatedAt)) {
        cache.delete(name);
        return undefined;
      }
      cache.set(name, record);
      return record;
    },
    async save(record) {
      const name = nameOf(record.conversationId);
      const pruned = pruneRecord(record);
      // Written only on change (a turn may report the same checkpoint more than once).
      if (sameRecord(queued.get(name)?.record ?? cache.get(name), pruned)) return queued.get(name)?.done;
      cache.set(name, pruned);
      await enqueue(name, pruned);
    },
    async delete(conversationId) {
      const name = nameOf(conversationId);
      cache.delete(name);
      await scanned();
      if (!entries.has(name)) await refreshOnce();
      const found = entries.get(name);
      if (found?.kind === KIND_RECORD) await bury(name, Math.max(now(), found.updatedAt));
      if (legacy.has(name)) await removeLegacy(name);
    },
    async deleteExpired() {
      await scanned();
      await refreshOnce();
      const { files, temps } = await listLegacy();
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
        if (item.file !== undefined) await removeLegacy(item.name);
        else await bury(item.name, Math.max(now(), item.updatedAt));
        count -= 1;
        total -= item.size;
        removed += 1;
      }
      await compact();
      return removed;
    },
  };
}
