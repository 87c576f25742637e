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
 *
 * Modules, each one concern of the above: record-cache.ts (the memory cache, and whether a save changes anything),
 * save-queue.ts (coalesced saves), log-map.ts (the map, scanning and refreshing it, reading an entry),
 * segment-writer.ts (this store's own segment), segment-owner.ts (whose a segment is, whether they may still append),
 * legacy-files.ts (the `<hex>.json` files), log-sweep.ts (expiry and caps) and log-compaction.ts; this file composes
 * them into the store: a load, a save, a delete and the sweep.
 */
import { createHash } from "node:crypto";
import { loadOnce } from "../../util/code-on-disk.js";
import type { Logger } from "../../util/logger.js";
import { silentLogger } from "../../util/logger.js";
import { pruneRecord } from "../blob-graph.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationStoreOptions,
  DEFAULT_CONVERSATION_TTL_MS,
} from "../types.js";
import { createLegacyFiles } from "./legacy-files.js";
import { compact } from "./log-compaction.js";
import { createLogMap, isMissing, readEntry, type SegmentState } from "./log-map.js";
import { sweep } from "./log-sweep.js";
import { RecordCache, sameRecord } from "./record-cache.js";
import { encodeRecord } from "./record-file.js";
import { KIND_RECORD, KIND_TOMBSTONE } from "./record-log.js";
import { SaveQueue } from "./save-queue.js";
import { createSegmentWriter } from "./segment-writer.js";

export { sizeOf } from "./record-cache.js";

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
const recordDecoder = loadOnce(() => import("./record-decode.js").then((module) => module.decodeRecord));

/** The hex SHA-256 of a conversation id: the key of its log entries and the name of its legacy file. */
function nameOf(conversationId: string): string {
  return createHash("sha256").update(conversationId).digest("hex");
}

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

/** Creates the file-backed conversation store. */
export function createFileConversationStore(options: FileConversationStoreOptions): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const maxEntries = options.maxEntries ?? 10_000;
  const maxTotalBytes = options.maxTotalBytes ?? 1024 * 1024 * 1024;
  const segmentBytes = options.segmentBytes ?? 64 * 1024 * 1024;
  const cache = new RecordCache(options.cacheBytes ?? 8 * 1024 * 1024);
  const expired = (updatedAt: number) => now() - updatedAt > ttlMs;
  const dir = options.dir;

  const segments = new Map<string, SegmentState>();
  const writer = createSegmentWriter({ dir, segments, segmentBytes, now, logger });
  const legacy = createLegacyFiles({ dir, logger, decodeOrDrop });
  const map = createLogMap({ dir, segments, own: writer, legacy, logger });
  const { entries, refreshOnce, scanned } = map;

  /** Appends a tombstone for `name` that shadows its entries up to `updatedAt` (a tie goes to the tombstone). */
  const bury = async (name: string, updatedAt: number) => {
    const found = await writer.append(name, KIND_TOMBSTONE, updatedAt, []);
    const current = entries.get(name);
    if (current === undefined || current.updatedAt <= updatedAt) entries.set(name, found);
  };

  const write = async (name: string, record: ConversationRecord) => {
    const found = await writer.append(name, KIND_RECORD, record.updatedAt, encodeRecord(record));
    entries.set(name, found);
    if (legacy.names.has(name)) await legacy.remove(name);
  };
  const saves = new SaveQueue(write);
  const { queued } = saves;

  /** The newest stored record of `name` (log first, then a legacy file), not checked for expiry. */
  const readStored = async (name: string): Promise<ConversationRecord | undefined> => {
    await scanned();
    if (!entries.has(name)) await refreshOnce();
    let found = entries.get(name);
    if (found === undefined) return legacy.read(name);
    if (found.kind === KIND_TOMBSTONE) return undefined;
    let bytes: Buffer;
    try {
      bytes = await readEntry(dir, found, false);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Compacted by another process: its live entries are in another segment now.
      await refreshOnce(true);
      found = entries.get(name);
      if (found?.kind !== KIND_RECORD) return found === undefined ? legacy.read(name) : undefined;
      bytes = await readEntry(dir, found, false);
    }
    const entry = found;
    return decodeOrDrop(bytes, async (error) => {
      logger.warn("removing a corrupt conversation record", { name, segment: entry.segment, error });
      await bury(name, entry.updatedAt);
    });
  };

  const compaction = { dir, map, writer, now, ttlMs, logger };
  const sweepContext = {
    dir,
    map,
    legacy,
    cache,
    bury,
    compact: () => compact(compaction),
    now,
    expired,
    maxEntries,
    maxTotalBytes,
    logger,
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
      await saves.enqueue(name, pruned);
    },
    async delete(conversationId) {
      const name = nameOf(conversationId);
      cache.delete(name);
      await scanned();
      if (!entries.has(name)) await refreshOnce();
      const found = entries.get(name);
      if (found?.kind === KIND_RECORD) await bury(name, Math.max(now(), found.updatedAt));
      if (legacy.names.has(name)) await legacy.remove(name);
    },
    deleteExpired: () => sweep(sweepContext),
  };
}
