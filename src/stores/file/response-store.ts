/**
 * The file {@link ResponseStore} of the Responses surface (`store: true`, `previous_response_id`, `GET`/`DELETE
 * /v1/responses/{id}`). A record keeps the response object and the full input it answered (already expanded along
 * its own `previous_response_id` chain), so continuing from it is one lookup. Records are plain JSON: this layer
 * never interprets the wire format. Bounded (oldest files by modification time go first) and expiring with the
 * conversation TTL. One 0600 file per response (named by the SHA-256 of the id) in a 0700 directory, written
 * atomically.
 */
import { createHash } from "node:crypto";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { loadOnce } from "../../util/code-on-disk.js";
import type { Logger } from "../../util/logger.js";
import { silentLogger } from "../../util/logger.js";
import {
  DEFAULT_CONVERSATION_TTL_MS,
  DEFAULT_MAX_STORED_RESPONSES,
  type ResponseStore,
  type ResponseStoreOptions,
  type StoredResponse,
} from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { storeDir } from "./store-dir.js";

/** Options of {@link createFileResponseStore}. */
export interface FileResponseStoreOptions extends ResponseStoreOptions {
  /** Directory holding the response files (created 0700). */
  dir: string;
  logger?: Logger;
}

const FILE_VERSION = 1;

/** The stored file's schema, built on the first read (zod loads then, not when a server starts). */
const schema = loadOnce(() => import("./response-schema.js").then((module) => module.storedFileSchema(FILE_VERSION)));

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
  const directory = storeDir(options.dir);
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
    // Outside the try: a schema that cannot be loaded (dist/ changed under the server) says nothing of the file,
    // which must not be discarded for it.
    const stored = await schema();
    try {
      const { version: _version, ...record } = stored.parse(JSON.parse(text));
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
      await directory.ready();
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
