/**
 * The file {@link AuditLog} of one instance: `<dataDir>/audit.log`, one JSON object per line, mode 0600, appended
 * with O_APPEND (each entry is one write, so lines from the CLI and a running server never interleave).
 *
 * Bounded: an append that would take the file past `maxBytes` (16 MiB, about 80,000 entries) first renames it to
 * `audit.log.1`, replacing the one before, so the log never holds more than twice that on disk. The rename happens
 * under a lock file (`audit.log.lock`, file-lock.ts) after measuring the file again, so writers of several processes
 * that find it full at once rotate it once. Reading the newest N entries reads the files backwards from their end, a
 * chunk at a time, so `audit --limit 50` costs the same on a full log as on a new one; reading all of them streams
 * both files line by line.
 */
import { createReadStream } from "node:fs";
import { type FileHandle, open, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { makeDir } from "../../util/make-dir.js";
import { parseAuditEntry } from "../audit-entries.js";
import type { AuditEntry, AuditLog } from "../types.js";
import { withFileLock } from "./file-lock.js";
import { isMissing } from "./log-map.js";

/** The file's name inside the data directory. */
export const AUDIT_FILE_NAME = "audit.log";

/** The size at which audit.log is rotated to audit.log.1. @default 16 MiB */
export const AUDIT_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** Bytes read at a time when reading backwards. */
const CHUNK_BYTES = 64 * 1024;
/** A line longer than this (no entry is) is skipped when reading backwards, not held whole. */
const MAX_LINE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

async function openForReading(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Up to `limit` entries of the file at `path`, newest first, read from its end. */
async function newestOf(path: string, limit: number): Promise<AuditEntry[]> {
  const found: AuditEntry[] = [];
  const handle = await openForReading(path);
  if (handle === undefined) return found;
  try {
    let position = (await handle.stat()).size;
    // The start of the line that ends where the bytes read so far begin.
    let carry = Buffer.alloc(0);
    let skipping = false;
    const take = (line: Buffer) => {
      const entry = line.length === 0 ? undefined : parseAuditEntry(line.toString("utf8"));
      if (entry !== undefined) found.push(entry);
    };
    while (position > 0 && found.length < limit) {
      const length = Math.min(CHUNK_BYTES, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, position);
      const data = Buffer.concat([chunk, carry]);
      let end = data.length;
      for (let index = data.lastIndexOf(NEWLINE, end - 1); index >= 0; index = data.lastIndexOf(NEWLINE, end - 1)) {
        if (skipping) skipping = false;
        else take(data.subarray(index + 1, end));
        if (found.length >= limit) return found;
        end = index;
        if (end === 0) break;
      }
      carry = data.subarray(0, end);
      if (carry.length > MAX_LINE_BYTES) {
        carry = Buffer.alloc(0);
        skipping = true;
      }
    }
    if (position === 0 && !skipping && found.length < limit) take(carry);
    return found;
  } finally {
    await handle.close();
  }
}

/** Every entry of the file at `path`, oldest first, read line by line. */
async function allOf(path: string): Promise<AuditEntry[]> {
  const handle = await openForReading(path);
  if (handle === undefined) return [];
  const entries: AuditEntry[] = [];
  // Loaded here: reading the whole log is rare (`audit` without --limit), and a server's start must not load readline
  // while bin/ holds the young generation (test/cli/held-builtins.test.ts).
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: createReadStream("", { fd: handle.fd, autoClose: false }), crlfDelay: 1 });
  try {
    for await (const line of lines) {
      const entry = line.trim() === "" ? undefined : parseAuditEntry(line);
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  } finally {
    lines.close();
    await handle.close();
  }
}

/** The audit log in `dir` (the data directory). */
export function createFileAuditLog(options: {
  dir: string;
  /** @default AUDIT_FILE_MAX_BYTES */
  maxBytes?: number;
}): AuditLog & { readonly location: string } {
  const path = join(options.dir, AUDIT_FILE_NAME);
  const previous = `${path}.1`;
  const maxBytes = options.maxBytes ?? AUDIT_FILE_MAX_BYTES;
  let tightened = false;
  let rotation: Promise<unknown> = Promise.resolve();

  /** Renames audit.log to audit.log.1 when `bytes` more would take it past maxBytes (run under the lock). */
  const rotateIfFull = async (bytes: number) => {
    const current = await stat(path).catch(() => undefined);
    if (current === undefined || current.size === 0 || current.size + bytes <= maxBytes) return;
    await rename(path, previous).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  };

  const openForAppend = async () => {
    const handle = await open(path, "a+", 0o600);
    // A file made by hand or by an older umask gets the mode it should have, once per process.
    if (!tightened && process.platform !== "win32") await handle.chmod(0o600).catch(() => undefined);
    tightened = true;
    return handle;
  };

  return {
    location: path,
    async append(entry) {
      await makeDir(options.dir);
      const line = `${JSON.stringify(entry)}\n`;
      let handle = await openForAppend();
      try {
        const measured = await handle.stat();
        if (measured.size > 0 && measured.size + Buffer.byteLength(line) > maxBytes) {
          await handle.close();
          // Under the lock, measured again: a writer that found the file full just before another rotated it would
          // otherwise rename the other's fresh audit.log over audit.log.1, losing the entries it held.
          // This writer's own appends that found it full take the lock one after another, not all polling for it.
          const bytes = Buffer.byteLength(line);
          const rotated = rotation.then(() => withFileLock(`${path}.lock`, () => rotateIfFull(bytes)));
          rotation = rotated.catch(() => undefined);
          await rotated;
          tightened = false;
          handle = await openForAppend();
        }
        // After an append a full disk cut short, this line starts on a line of its own.
        const size = (await handle.stat()).size;
        const last = Buffer.alloc(1);
        if (size > 0) await handle.read(last, 0, 1, size - 1);
        await handle.write(size > 0 && last[0] !== NEWLINE ? `\n${line}` : line);
      } finally {
        await handle.close().catch(() => undefined);
      }
    },
    async read(readOptions = {}) {
      const limit = readOptions.limit;
      if (limit === undefined) return [...(await allOf(previous)), ...(await allOf(path))];
      if (limit <= 0) return [];
      const found = await newestOf(path, limit);
      if (found.length < limit) found.push(...(await newestOf(previous, limit - found.length)));
      return found.reverse();
    },
  };
}
