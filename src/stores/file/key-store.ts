/**
 * The file {@link KeyStore} of one instance: `<dataDir>/keys.json` (mode 0600, written atomically: temp file and
 * rename), holding only hashes of the keys. Writers take a lock file next to it, so a `keys create` while the server's
 * admin API writes loses nothing. `version()` is the file's inode, size and mtime: one stat, what a running server
 * polls to see a change.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { ProxyError } from "../../util/errors.js";
import { makeDir } from "../../util/make-dir.js";
import { conflictsWith, parseKeyRecord, unknownKey, withChanges } from "../key-records.js";
import type { KeyStore, VirtualKeyRecord } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { withFileLock } from "./file-lock.js";

/** The file's name inside the data directory. */
export const KEYS_FILE_NAME = "keys.json";

interface KeysFile {
  version: 1;
  keys: VirtualKeyRecord[];
}

/** The key store in `dir` (the data directory). */
export function createFileKeyStore(options: { dir: string }): KeyStore {
  const path = join(options.dir, KEYS_FILE_NAME);
  const lock = `${path}.lock`;

  async function read(): Promise<VirtualKeyRecord[]> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw new ProxyError("internal", `Could not read the key file ${path}.`, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new ProxyError("internal", `The key file ${path} is not valid JSON; it was left untouched.`, {
        cause: error,
      });
    }
    const keys = (parsed as Partial<KeysFile> | null)?.keys;
    if (!Array.isArray(keys)) {
      throw new ProxyError("internal", `The key file ${path} is not a cursor-bridge key file; it was left untouched.`);
    }
    const records = keys.map(parseKeyRecord);
    if (records.some((record) => record === undefined)) {
      throw new ProxyError("internal", `The key file ${path} holds a record that is not a key; it was left untouched.`);
    }
    return records as VirtualKeyRecord[];
  }

  async function write(keys: VirtualKeyRecord[]): Promise<void> {
    const file: KeysFile = { version: 1, keys };
    await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  }

  const locked = async <T>(work: () => Promise<T>): Promise<T> => {
    await makeDir(options.dir);
    return withFileLock(lock, work);
  };

  return {
    location: path,
    list: read,
    create: (record) =>
      locked(async () => {
        const keys = await read();
        for (const existing of keys) {
          const conflict = conflictsWith(record, existing);
          if (conflict !== undefined) throw conflict;
        }
        await write([...keys, record]);
      }),
    update: (id, changes) =>
      locked(async () => {
        const keys = await read();
        const index = keys.findIndex((record) => record.id === id);
        const current = keys[index];
        if (current === undefined) throw unknownKey(id);
        const next = withChanges(current, changes);
        keys[index] = next;
        await write(keys);
        return next;
      }),
    async version() {
      try {
        const info = await stat(path, { bigint: true });
        return `${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return "none";
        throw error;
      }
    },
  };
}
