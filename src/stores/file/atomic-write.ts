/** The atomic write of the file stores (temp file in the same directory, rename), mode 0600. */
import { randomBytes } from "node:crypto";
import { chmod, type FileHandle, open, rename, rm, writeFile } from "node:fs/promises";

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
export async function writeFileAtomic(
  path: string,
  content: string | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
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
