/**
 * The atomic write of the file stores (temp file in the same directory, rename), mode 0600.
 *
 * Small writes (up to {@link SYNC_WRITE_MAX_BYTES}, which is every conversation record and index line of a normal
 * turn) run as plain system calls on the calling thread. Each `fs/promises` call is a round trip through libuv's
 * thread pool; a conversation save is six of them (open, write, chmod, utimes, close, rename), which measured 1.8 ms
 * of wall time between Cursor's checkpoint and the answer's end on the benchmark machine, while the same six calls made
 * directly take a few tens of microseconds when the data goes to the page cache. Larger writes keep the thread pool,
 * so a big record never holds the event loop for long, and so do all writes for a minute after a few direct ones in a
 * row took longer than {@link DIRECT_WRITE_POLICY}'s `slowMs` (a data directory on a network file system, a disk under
 * load).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  futimesSync,
  openSync,
  renameSync,
  rmSync,
  write,
  writeFileSync,
  writeSync,
  writev,
  writevSync,
} from "node:fs";
import { chmod, type FileHandle, open, rename, rm, writeFile } from "node:fs/promises";

/**
 * Temp names: a random tag per process and a counter, unique across the processes sharing a directory and within
 * one (a synchronous `randomBytes` per write measured about 27 µs, more than the rest of a small write's user time).
 */
const TEMP_TAG = randomBytes(6).toString("hex");
let tempCount = 0;
/** A temporary name beside `path`, unique to this process and write. */
const tempPathOf = (path: string) => `${path}.${TEMP_TAG}${(tempCount++).toString(36)}.tmp`;

/** Writes up to this many bytes go out as direct system calls (see the module comment). */
export const SYNC_WRITE_MAX_BYTES = 256 * 1024;

/**
 * `slowInRow` direct writes in a row, each slower than `slowMs`, held every request of the process that long: the
 * writes of the next `poolForMs` go through the thread pool instead, then direct writes are tried again. A slow disk
 * (a network file system, a disk under load) makes every write slow and trips this after a few. One slow write does
 * not: on a machine short of CPU a write now and then loses its core to another process (`discountPreemption`: a
 * write during which the process had an involuntary context switch neither counts nor breaks the row) or meets a
 * slow moment of the file system (the benchmark VM's ext4 takes a few ms now and then to find a free inode), and each
 * of them sent the next minute's saves through the pool: six thread-pool round trips per save instead of six system
 * calls, about 0.2 ms more CPU per request there.
 */
export const DIRECT_WRITE_POLICY = { slowMs: 2, slowInRow: 3, poolForMs: 60_000, discountPreemption: true };
let poolUntil = Number.NEGATIVE_INFINITY;
let slowInRow = 0;

/** Whether small writes may go out as direct system calls now (see {@link DIRECT_WRITE_POLICY}). */
export function directWritesAllowed(): boolean {
  return performance.now() >= poolUntil;
}

/** Allows direct writes again at once (tests; a data directory that changed). */
export function resumeDirectWrites(): void {
  poolUntil = Number.NEGATIVE_INFINITY;
  slowInRow = 0;
}

/**
 * Runs `direct` (system calls on this thread) unless direct writes are paused, then `pooled` instead; direct writes
 * slower than the policy's `slowMs`, `slowInRow` in a row, pause them (see {@link DIRECT_WRITE_POLICY}).
 */
export async function writeDirectOrPooled(direct: () => void, pooled: () => Promise<void>): Promise<void> {
  if (!directWritesAllowed()) return pooled();
  const policy = DIRECT_WRITE_POLICY;
  const preemptedBefore = policy.discountPreemption ? process.resourceUsage().involuntaryContextSwitches : 0;
  const started = performance.now();
  try {
    direct();
  } finally {
    const ended = performance.now();
    if (ended - started <= policy.slowMs) slowInRow = 0;
    else if (!policy.discountPreemption || process.resourceUsage().involuntaryContextSwitches === preemptedBefore) {
      slowInRow += 1;
      if (slowInRow >= policy.slowInRow) {
        slowInRow = 0;
        poolUntil = ended + policy.poolForMs;
      }
    }
  }
}

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Sets the file's access and modification time (ms since the epoch), on the open file before it is renamed. */
  mtimeMs?: number;
}

/** Writes every byte of `chunks`: one `writev` for all of them, then whatever a partial write left. */
async function writeAll(file: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  let { bytesWritten } = await file.writev(chunks as Uint8Array[]);
  for (const chunk of chunks) {
    if (bytesWritten >= chunk.byteLength) {
      bytesWritten -= chunk.byteLength;
      continue;
    }
    await file.writeFile(chunk.subarray(bytesWritten));
    bytesWritten = 0;
  }
}

/**
 * Writes `content` (text, or byte chunks written one after the other) to `path` atomically with mode 0600. Byte
 * chunks go out in one `writev`, and the mode and times are set on the open file: a conversation's save is an open,
 * a write, a chmod, a utimes, a close and a rename (it was one write per chunk, and the times set by path after).
 */
export function writeFileAtomic(
  path: string,
  content: string | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = tempPathOf(path);
  const pooled = () => writePooledFileAtomic(path, temp, content, options);
  return sizeOf(content) <= SYNC_WRITE_MAX_BYTES
    ? writeDirectOrPooled(() => writeSmallFileAtomic(path, temp, content, options), pooled)
    : pooled();
}

/** {@link writeFileAtomic} at once, on the calling thread (small files written where nothing may wait). */
export function writeFileAtomicSync(path: string, content: string): void {
  writeSmallFileAtomic(path, tempPathOf(path), content, {});
}

/** {@link writeFileAtomic} through the thread pool (large contents, or while direct writes are paused). */
async function writePooledFileAtomic(
  path: string,
  temp: string,
  content: string | readonly Uint8Array[],
  options: AtomicWriteOptions,
): Promise<void> {
  try {
    if (typeof content === "string" && options.mtimeMs === undefined) {
      await writeFile(temp, content, { mode: 0o600, flag: "wx" });
      await chmod(temp, 0o600);
    } else {
      const file = await open(temp, "wx", 0o600);
      try {
        if (typeof content === "string") await file.writeFile(content);
        else await writeAll(file, content);
        await file.chmod(0o600);
        if (options.mtimeMs !== undefined) {
          const seconds = options.mtimeMs / 1000;
          await file.utimes(seconds, seconds);
        }
      } finally {
        await file.close();
      }
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Bytes of `content` (a string's UTF-8 length is at most three times its length: counted only near the limit). */
function sizeOf(content: string | readonly Uint8Array[]): number {
  if (typeof content !== "string") return content.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  return content.length * 3 <= SYNC_WRITE_MAX_BYTES ? content.length : Buffer.byteLength(content);
}

/** {@link writeFileAtomic} for small contents: the same steps as direct system calls (see the module comment). */
function writeSmallFileAtomic(
  path: string,
  temp: string,
  content: string | readonly Uint8Array[],
  options: AtomicWriteOptions,
): void {
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      if (typeof content === "string") writeFileSync(fd, content);
      else writeAllSync(fd, content);
      fchmodSync(fd, 0o600);
      if (options.mtimeMs !== undefined) {
        const seconds = options.mtimeMs / 1000;
        futimesSync(fd, seconds, seconds);
      }
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Writes every byte of `chunks` to `fd`: one `writev`, then whatever a partial write left. */
export function writeAllSync(fd: number, chunks: readonly Uint8Array[]): void {
  let written = writevSync(fd, chunks as Uint8Array[]);
  for (const chunk of chunks) {
    if (written >= chunk.byteLength) {
      written -= chunk.byteLength;
      continue;
    }
    for (let offset = written; offset < chunk.byteLength; ) offset += writeSync(fd, chunk, offset);
    written = 0;
  }
}

/** {@link writeAllSync} through the thread pool. */
export async function writeAllToFd(fd: number, chunks: readonly Uint8Array[]): Promise<void> {
  let written = await new Promise<number>((resolve, reject) =>
    writev(fd, chunks as Uint8Array[], (error, bytes) => (error ? reject(error) : resolve(bytes))),
  );
  for (const chunk of chunks) {
    if (written >= chunk.byteLength) {
      written -= chunk.byteLength;
      continue;
    }
    for (let offset = written; offset < chunk.byteLength; ) {
      offset += await new Promise<number>((resolve, reject) =>
        write(fd, chunk, offset, chunk.byteLength - offset, null, (error, bytes) =>
          error ? reject(error) : resolve(bytes),
        ),
      );
    }
    written = 0;
  }
}
