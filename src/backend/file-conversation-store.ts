/**
 * File implementation of {@link ConversationStore}: one JSON file per conversation under `dir`, named by the SHA-256
 * of the conversation id (so ids never reach the file system). Writes are atomic (temp file + rename); the directory
 * is 0700 and files 0600, because conversation content is as private as the credentials (brief: security).
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { Logger } from "../util/logger.js";
import { silentLogger } from "../util/logger.js";
import {
  type ConversationRecord,
  type ConversationStore,
  type ConversationStoreOptions,
  DEFAULT_CONVERSATION_TTL_MS,
  pruneRecord,
} from "./conversation-store.js";

/** Options of {@link createFileConversationStore}. */
export interface FileConversationStoreOptions extends ConversationStoreOptions {
  /** Directory holding the conversation files (created 0700). */
  dir: string;
  logger?: Logger;
}

const FILE_VERSION = 1;

const storedRecordSchema = z.object({
  version: z.literal(FILE_VERSION),
  conversationId: z.string(),
  checkpoint: z.string(),
  coveredMessages: z.number().int().nonnegative(),
  fingerprint: z.string(),
  updatedAt: z.number(),
  blobs: z.record(z.string().regex(/^[0-9a-f]+$/), z.string()),
});

function fileNameOf(conversationId: string): string {
  return `${createHash("sha256").update(conversationId).digest("hex")}.json`;
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "base64"));
}

function serialize(record: ConversationRecord): string {
  const blobs: Record<string, string> = {};
  for (const [id, data] of record.blobs) blobs[id] = toBase64(data);
  return JSON.stringify({
    version: FILE_VERSION,
    conversationId: record.conversationId,
    checkpoint: toBase64(record.checkpoint),
    coveredMessages: record.coveredMessages,
    fingerprint: record.fingerprint,
    updatedAt: record.updatedAt,
    blobs,
  });
}

function deserialize(text: string): ConversationRecord {
  const parsed = storedRecordSchema.parse(JSON.parse(text));
  return {
    conversationId: parsed.conversationId,
    checkpoint: fromBase64(parsed.checkpoint),
    coveredMessages: parsed.coveredMessages,
    fingerprint: parsed.fingerprint,
    updatedAt: parsed.updatedAt,
    blobs: new Map(Object.entries(parsed.blobs).map(([id, data]) => [id, fromBase64(data)])),
  };
}

/** Writes `content` to `path` atomically with mode 0600. */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temp, content, { mode: 0o600, flag: "wx" });
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Creates the file-backed conversation store. */
export function createFileConversationStore(options: FileConversationStoreOptions): ConversationStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  let dirReady: Promise<void> | undefined;
  const ensureDir = () => {
    dirReady ??= (async () => {
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
      await chmod(options.dir, 0o700);
    })();
    return dirReady;
  };
  const pathOf = (conversationId: string) => join(options.dir, fileNameOf(conversationId));
  const remove = (path: string) => rm(path, { force: true });

  return {
    async load(conversationId) {
      let text: string;
      try {
        text = await readFile(pathOf(conversationId), "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
      let record: ConversationRecord;
      try {
        record = deserialize(text);
      } catch (error) {
        logger.warn("discarding unreadable conversation file", { error });
        await remove(pathOf(conversationId));
        return undefined;
      }
      if (record.conversationId !== conversationId || now() - record.updatedAt > ttlMs) {
        await remove(pathOf(conversationId));
        return undefined;
      }
      return record;
    },
    async save(record) {
      await ensureDir();
      await writeFileAtomic(pathOf(record.conversationId), serialize(pruneRecord(record)));
    },
    async delete(conversationId) {
      await remove(pathOf(conversationId));
    },
    async deleteExpired() {
      let names: string[];
      try {
        names = await readdir(options.dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
        throw error;
      }
      let removed = 0;
      for (const name of names) {
        const path = join(options.dir, name);
        if (name.endsWith(".tmp")) {
          const info = await stat(path).catch(() => undefined);
          if (info !== undefined && now() - info.mtimeMs > ttlMs) await remove(path);
          continue;
        }
        if (!name.endsWith(".json")) continue;
        const text = await readFile(path, "utf8").catch(() => undefined);
        const updatedAt = text === undefined ? undefined : safeUpdatedAt(text);
        if (updatedAt !== undefined && now() - updatedAt <= ttlMs) continue;
        await remove(path);
        removed += 1;
      }
      return removed;
    },
  };
}

function safeUpdatedAt(text: string): number | undefined {
  try {
    return deserialize(text).updatedAt;
  } catch {
    return undefined;
  }
}
