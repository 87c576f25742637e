/**
 * A lock between processes sharing a data directory (the `keys` commands and a running server's admin API): a lock
 * file created with O_EXCL, removed when the work settles. A lock file older than `staleMs` belongs to a process that
 * died holding it and is taken over; waiting longer than `timeoutMs` fails.
 */
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { open, stat, unlink } from "node:fs/promises";
import { ProxyError } from "../../util/errors.js";

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** @default 5000 */
  timeoutMs?: number;
  /** @default 10000 */
  staleMs?: number;
}

const RETRY_MS = 15;

/** Removes the lock file; one already gone is fine. (`unlink`, not `rm`: `rm` loads Node's rimraf, which serve's
 * start keeps out of the young generation it holds.) */
async function removeLock(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
  });
}

async function acquire(path: string, timeoutMs: number, staleMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const age = await stat(path).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > staleMs) await removeLock(path);
    else if (Date.now() > deadline) {
      throw new ProxyError(
        "backend_unavailable",
        `Timed out waiting for the lock ${path}; remove it if no cursor-bridge runs.`,
        {
          detail: "unavailable",
        },
      );
    } else await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** Runs `work` holding the lock file `path`. */
export async function withFileLock<T>(path: string, work: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  await acquire(path, options.timeoutMs ?? 5000, options.staleMs ?? 10_000);
  try {
    return await work();
  } finally {
    await removeLock(path);
  }
}

/** Creates the lock file `path` (O_EXCL, holding our pid) with direct system calls when it is free; false when held. */
function tryLockSync(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, String(process.pid));
  } finally {
    closeSync(fd);
  }
  return true;
}

/** {@link removeLock} with a direct system call. */
function removeLockSync(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/**
 * {@link withFileLock} for start-up paths, where nothing else waits on the event loop: a free lock is taken and
 * removed with direct system calls (each `fs/promises` call is a thread-pool round trip); a held one is waited for,
 * and a stale one taken over, as {@link withFileLock} does.
 */
export async function withFileLockNow<T>(
  path: string,
  work: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  if (!tryLockSync(path)) return withFileLock(path, work, options);
  try {
    return await work();
  } finally {
    removeLockSync(path);
  }
}
