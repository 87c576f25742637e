/**
 * File implementation of {@link ConversationStore}, the embedded default: one file per conversation under `dir`,
 * named by the SHA-256 of the conversation id plus `.json` (so ids never reach the file system; the suffix is kept
 * from format 1 so existing data directories are swept alike), holding the record in the binary container of
 * record-file.ts (format 1 JSON files are still read). Writes are atomic (temp file +
 * rename); the directory is 0700 and files 0600, because conversation content is as private as the credentials.
 *
 * Off the hot path: recently used records stay in a bounded memory cache (a continued turn does not re-read its
 * file), a save that changes nothing writes nothing, and saves of one conversation queued behind a running write
 * are coalesced into one write of the newest record. A file's mtime is its record's `updatedAt`, so the expiry sweep
 * works from directory metadata alone and never re-reads stored files. The sweep also enforces the entry and size
 * caps (oldest first), skips what is not a regular file, and logs every removal with its reason.
 */
import { createHash } from "node:crypto";
import type { Dirent } from "node:fs";
import { chmod, lstat, mkdir, readdir, readFile, rm } from "node:fs/promises";
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
import { writeFileAtomic } from "./atomic-write.js";
import { encodeRecord } from "./record-file.js";

/** Options of {@link createFileConversationStore}. */
export interface FileConversationStoreOptions extends ConversationStoreOptions {
  /** Directory holding the conversation files (created 0700). */
  dir: string;
  logger?: Logger;
  /** Most bytes kept on disk; the sweep removes the oldest beyond it. @default 1 GiB */
  maxTotalBytes?: number;
  /** Memory for recently used records; a record larger than a quarter of it is not cached. @default 8 MiB */
  cacheBytes?: number;
}

/** The record reader (record-decode.ts, with zod), loaded on the store's first read rather than at start. */
let decoder: Promise<typeof import("./record-decode.js")["decodeRecord"]> | undefined;
const recordDecoder = () => {
  decoder ??= import("./record-decode.js").then((module) => module.decodeRecord);
  return decoder;
};

function fileNameOf(conversationId: string): string {
  return `${createHash("sha256").update(conversationId).digest("hex")}.json`;
}

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

interface StoredFile {
  name: string;
  mtimeMs: number;
  size: number;
}

/** Creates the file-backed conversation store. */
export function createFileConversationStore(options: FileConversationStoreOptions): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const maxEntries = options.maxEntries ?? 10_000;
  const maxTotalBytes = options.maxTotalBytes ?? 1024 * 1024 * 1024;
  const cache = new RecordCache(options.cacheBytes ?? 8 * 1024 * 1024);
  const queued = new Map<string, QueuedSave>();
  const writing = new Map<string, Promise<void>>();
  let dirReady: Promise<void> | undefined;
  const ensureDir = () => {
    dirReady ??= (async () => {
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
      await chmod(options.dir, 0o700);
    })();
    return dirReady;
  };
  const pathOf = (name: string) => join(options.dir, name);
  const remove = async (name: string) => {
    cache.delete(name);
    await rm(pathOf(name), { force: true });
  };
  const expired = (updatedAt: number) => now() - updatedAt > ttlMs;

  const write = async (name: string, record: ConversationRecord) => {
    await ensureDir();
    // The mtime carries updatedAt, so the sweep needs no read.
    await writeFileAtomic(pathOf(name), encodeRecord(record), { mtimeMs: record.updatedAt });
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

  const listFiles = async (): Promise<StoredFile[] | undefined> => {
    let entries: Dirent[];
    try {
      entries = await readdir(options.dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const files: StoredFile[] = [];
    for (const entry of entries) {
      const name = entry.name;
      if (!name.endsWith(".json") && !name.endsWith(".tmp")) continue;
      if (!entry.isFile()) {
        logger.warn("skipping an entry of the conversation directory that is not a file", { name });
        continue;
      }
      const info = await lstat(pathOf(name)).catch((error: unknown) => {
        logger.warn("skipping an unreadable entry of the conversation directory", { name, error });
        return undefined;
      });
      if (info !== undefined) files.push({ name, mtimeMs: info.mtimeMs, size: info.size });
    }
    return files;
  };

  return {
    async load(conversationId) {
      const name = fileNameOf(conversationId);
      let record = cache.get(name);
      if (record === undefined) {
        let bytes: Buffer;
        try {
          bytes = await readFile(pathOf(name));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
          throw error;
        }
        const decodeRecord = await recordDecoder();
        try {
          record = decodeRecord(bytes);
        } catch (error) {
          logger.warn("removing a corrupt conversation file", { name, error });
          await remove(name);
          return undefined;
        }
      }
      if (record.conversationId !== conversationId || expired(record.updatedAt)) {
        await remove(name);
        return undefined;
      }
      cache.set(name, record);
      return record;
    },
    async save(record) {
      const name = fileNameOf(record.conversationId);
      const pruned = pruneRecord(record);
      // Written only on change (a turn may report the same checkpoint more than once).
      if (sameRecord(queued.get(name)?.record ?? cache.get(name), pruned)) return queued.get(name)?.done;
      cache.set(name, pruned);
      await enqueue(name, pruned);
    },
    async delete(conversationId) {
      await remove(fileNameOf(conversationId));
    },
    async deleteExpired() {
      const files = await listFiles();
      if (files === undefined) return 0;
      let removed = 0;
      const kept: StoredFile[] = [];
      for (const file of files) {
        if (file.name.endsWith(".tmp")) {
          if (expired(file.mtimeMs)) await rm(pathOf(file.name), { force: true });
          continue;
        }
        if (file.size === 0 || expired(file.mtimeMs)) {
          if (file.size === 0) logger.warn("removing an empty conversation file", { name: file.name });
          else logger.info("removing an expired conversation", { name: file.name, reason: "expired" });
          await remove(file.name);
          removed += 1;
        } else kept.push(file);
      }
      kept.sort((a, b) => a.mtimeMs - b.mtimeMs);
      let total = kept.reduce((sum, file) => sum + file.size, 0);
      let count = kept.length;
      for (const file of kept) {
        if (count <= maxEntries && total <= maxTotalBytes) break;
        const reason = count > maxEntries ? "entry cap" : "size cap";
        logger.info("removing the oldest conversation", { name: file.name, reason, maxEntries, maxTotalBytes });
        await remove(file.name);
        count -= 1;
        total -= file.size;
        removed += 1;
      }
      return removed;
    },
  };
}
