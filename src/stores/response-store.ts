/**
 * Stored responses of the OpenAI Responses surface (`store: true`, `previous_response_id`, `GET`/`DELETE
 * /v1/responses/{id}`). A record keeps the response object and the full input it answered (already expanded along
 * its own `previous_response_id` chain), so continuing from it is one lookup. Records are plain JSON: this layer
 * never interprets the wire format. Bounded (oldest records go first) and expiring with the conversation TTL.
 * The file store keeps one 0600 file per response (named by the SHA-256 of the id) in a 0700 directory, written
 * atomically; the memory store serves tests.
 */
import { createHash } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import type { JsonValue } from "../backend/types.js";
import type { Logger } from "../util/logger.js";
import { silentLogger } from "../util/logger.js";
import { DEFAULT_CONVERSATION_TTL_MS } from "./conversation-store.js";
import { writeFileAtomic } from "./file/conversation-store.js";

/** One stored response. */
export interface StoredResponse {
  id: string;
  /** The response object as returned to the client. */
  response: { [key: string]: JsonValue };
  /** Every input item the response answered, earlier stored turns included. */
  input: JsonValue[];
  /** Epoch milliseconds of the save. */
  storedAt: number;
}

/** Storage of responses by id. */
export interface ResponseStore {
  /** The record, or undefined when unknown or expired. */
  get(id: string): Promise<StoredResponse | undefined>;
  put(record: StoredResponse): Promise<void>;
  /** Resolves to whether a record existed. */
  delete(id: string): Promise<boolean>;
  /** Removes expired records; resolves to how many were removed. */
  deleteExpired(): Promise<number>;
}

/** Options shared by the store implementations. */
export interface ResponseStoreOptions {
  /** @default 7 days (the conversation TTL) */
  ttlMs?: number;
  /** Most records kept; the oldest are removed beyond it. @default 1000 */
  maxEntries?: number;
  /** @default Date.now */
  now?: () => number;
}

export const DEFAULT_MAX_STORED_RESPONSES = 1000;

/** Creates the in-memory store (same TTL and bound as the file store). */
export function createMemoryResponseStore(options: ResponseStoreOptions = {}): ResponseStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES;
  const now = options.now ?? Date.now;
  // Map order is insertion order: re-inserting on put keeps the oldest first.
  const records = new Map<string, StoredResponse>();
  const expired = (record: StoredResponse) => now() - record.storedAt > ttlMs;
  return {
    async get(id) {
      const record = records.get(id);
      if (record === undefined) return undefined;
      if (expired(record)) {
        records.delete(id);
        return undefined;
      }
      return structuredClone(record);
    },
    async put(record) {
      records.delete(record.id);
      records.set(record.id, structuredClone(record));
      for (const id of records.keys()) {
        if (records.size <= maxEntries) break;
        records.delete(id);
      }
    },
    async delete(id) {
      return records.delete(id);
    },
    async deleteExpired() {
      let removed = 0;
      for (const [id, record] of records) {
        if (!expired(record)) continue;
        records.delete(id);
        removed += 1;
      }
      return removed;
    },
  };
}

/** Options of {@link createFileResponseStore}. */
export interface FileResponseStoreOptions extends ResponseStoreOptions {
  /** Directory holding the response files (created 0700). */
  dir: string;
  logger?: Logger;
}

const FILE_VERSION = 1;

const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

const storedSchema = z.object({
  version: z.literal(FILE_VERSION),
  id: z.string(),
  response: z.record(z.string(), jsonValue),
  input: z.array(jsonValue),
  storedAt: z.number(),
});

function fileNameOf(id: string): string {
  return `${createHash("sha256").update(id).digest("hex")}.json`;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT";
}

/** Creates the file-backed store. */
export function createFileResponseStore(options: FileResponseStoreOptions): ResponseStore {
  const ttlMs = options.ttlMs ?? DEFAULT_CONVERSATION_TTL_MS;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_STORED_RESPONSES;
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
  const pathOf = (id: string) => join(options.dir, fileNameOf(id));
  const listFiles = async (): Promise<string[]> => {
    try {
      return (await readdir(options.dir)).filter((name) => name.endsWith(".json"));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  };
  const read = async (path: string): Promise<StoredResponse | undefined> => {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      const { version: _version, ...record } = storedSchema.parse(JSON.parse(text));
      return record;
    } catch (error) {
      logger.warn("discarding unreadable stored response", { error });
      await rm(path, { force: true });
      return undefined;
    }
  };
  /** Removes the oldest files (by modification time) beyond the bound. */
  const enforceBound = async () => {
    const names = await listFiles();
    if (names.length <= maxEntries) return;
    const dated = await Promise.all(
      names.map(async (name) => {
        const info = await stat(join(options.dir, name)).catch(() => undefined);
        return { name, at: info?.mtimeMs ?? 0 };
      }),
    );
    dated.sort((a, b) => a.at - b.at);
    for (const { name } of dated.slice(0, names.length - maxEntries))
      await rm(join(options.dir, name), { force: true });
  };

  return {
    async get(id) {
      const record = await read(pathOf(id));
      if (record === undefined) return undefined;
      if (record.id !== id || now() - record.storedAt > ttlMs) {
        await rm(pathOf(id), { force: true });
        return undefined;
      }
      return record;
    },
    async put(record) {
      await ensureDir();
      await writeFileAtomic(pathOf(record.id), JSON.stringify({ version: FILE_VERSION, ...record }));
      await enforceBound();
    },
    async delete(id) {
      const existed = (await read(pathOf(id))) !== undefined;
      await rm(pathOf(id), { force: true });
      return existed;
    },
    async deleteExpired() {
      let removed = 0;
      for (const name of await listFiles()) {
        const record = await read(join(options.dir, name));
        if (record !== undefined && now() - record.storedAt <= ttlMs) continue;
        await rm(join(options.dir, name), { force: true });
        removed += 1;
      }
      return removed;
    },
  };
}
