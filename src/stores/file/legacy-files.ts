/**
 * The file conversation store's legacy files (conversation-store.ts has the design): before the record log, each
 * conversation was one `<hex>.json` file (record-file.ts's formats 1 and 2) named by the SHA-256 of its id. They are
 * still read when the log has no entry for a conversation, removed once it is saved to the log, and expired, capped
 * and cleaned up (with stale `.tmp` leftovers) by the sweep, by their mtime, so a directory of an older version keeps
 * its conversations and drains into the log.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../util/logger.js";
import type { ConversationRecord } from "../types.js";
import { isMissing } from "./log-map.js";

const LEGACY_NAME = /^([0-9a-f]{64})\.json$/;

/** A legacy file (or a `.tmp` leftover) found by {@link LegacyFiles.list}. */
export interface LegacyFile {
  name: string;
  fileName: string;
  mtimeMs: number;
  size: number;
}

export interface LegacyFiles {
  /** Names of legacy `<hex>.json` files seen by the last scan of the directory. */
  readonly names: Set<string>;
  /** Takes the legacy names out of a listing of the directory (the map's refresh, log-map.ts). */
  noteDirectory(dirNames: readonly string[]): void;
  /** The record of the legacy file of `name`, if any; one that does not decode is logged and removed. */
  read(name: string): Promise<ConversationRecord | undefined>;
  remove(name: string): Promise<void>;
  /** The legacy files and `.tmp` leftovers in the directory, with their mtime and size (for the sweep). */
  list(): Promise<{ files: LegacyFile[]; temps: LegacyFile[] }>;
}

export interface LegacyFilesOptions {
  dir: string;
  logger: Logger;
  /** The record in `bytes`, or undefined after `drop` removed what does not decode (conversation-store.ts). */
  decodeOrDrop(bytes: Buffer, drop: (error: unknown) => Promise<void>): Promise<ConversationRecord | undefined>;
}

export function createLegacyFiles(options: LegacyFilesOptions): LegacyFiles {
  const { logger, decodeOrDrop } = options;
  const names = new Set<string>();
  const pathOf = (name: string) => join(options.dir, name);

  const noteDirectory = (dirNames: readonly string[]) => {
    names.clear();
    for (const name of dirNames) {
      const match = LEGACY_NAME.exec(name);
      if (match?.[1] !== undefined) names.add(match[1]);
    }
  };

  const remove = async (name: string) => {
    names.delete(name);
    await rm(pathOf(`${name}.json`), { force: true });
  };

  const read = async (name: string): Promise<ConversationRecord | undefined> => {
    if (!names.has(name)) return undefined;
    let bytes: Buffer;
    try {
      bytes = await readFile(pathOf(`${name}.json`));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    return decodeOrDrop(bytes, async (error) => {
      logger.warn("removing a corrupt conversation file", { name: `${name}.json`, error });
      await remove(name);
    });
  };

  const list = async (): Promise<{ files: LegacyFile[]; temps: LegacyFile[] }> => {
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

  return { names, noteDirectory, read, remove, list };
}
