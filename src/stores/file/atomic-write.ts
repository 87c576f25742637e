/** The atomic write of the file stores (temp file in the same directory, rename), mode 0600. */
import { randomBytes } from "node:crypto";
import { chmod, open, rename, rm, writeFile } from "node:fs/promises";

/** Writes `content` (text, or byte chunks written one after the other) to `path` atomically with mode 0600. */
export async function writeFileAtomic(path: string, content: string | readonly Uint8Array[]): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    if (typeof content === "string") await writeFile(temp, content, { mode: 0o600, flag: "wx" });
    else {
      const file = await open(temp, "wx", 0o600);
      try {
        for (const chunk of content) await file.writeFile(chunk);
      } finally {
        await file.close();
      }
    }
    await chmod(temp, 0o600);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
