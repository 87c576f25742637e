/**
 * `mkdir -p` that always ends. Node 20's `mkdir(path, { recursive: true })` loops forever (at full CPU, and deaf to
 * the first SIGTERM while it spins in the thread pool) when the kernel answers ENOENT for a path whose parent exists,
 * as /proc and some other virtual file systems do (`--data-dir /proc/x`). These create one level at a time, each
 * level at most once, so the number of steps is bounded by the path's depth and such an error is thrown as is.
 */
import { mkdirSync, statSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";

/** The error for a path that exists but is not a directory (what `mkdir -p` reports for it). */
function notADirectory(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOTDIR: not a directory, mkdir '${path}'`);
  error.code = "ENOTDIR";
  error.syscall = "mkdir";
  error.path = path;
  return error;
}

/** Creates `path` and any missing parents (each with `mode`); an existing directory is fine. */
export async function makeDir(path: string, mode = 0o700): Promise<void> {
  const target = resolve(path);
  try {
    await mkdir(target, { mode });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      if (!(await stat(target)).isDirectory()) throw notADirectory(target);
      return;
    }
    const parent = dirname(target);
    if (code !== "ENOENT" || parent === target) throw error;
  }
  await makeDir(dirname(target), mode);
  // Once more, and only once: ENOENT again, with the parent there, is the file system refusing (not a race to retry).
  try {
    await mkdir(target, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (!(await stat(target)).isDirectory()) throw notADirectory(target);
  }
}

/** {@link makeDir}, synchronously. */
export function makeDirSync(path: string, mode = 0o700): void {
  const target = resolve(path);
  try {
    mkdirSync(target, { mode });
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      if (!statSync(target).isDirectory()) throw notADirectory(target);
      return;
    }
    const parent = dirname(target);
    if (code !== "ENOENT" || parent === target) throw error;
  }
  makeDirSync(dirname(target), mode);
  try {
    mkdirSync(target, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (!statSync(target).isDirectory()) throw notADirectory(target);
  }
}
