/**
 * The file {@link AuditLog} of one instance: `<dataDir>/audit.log`, one JSON object per line, mode 0600, appended
 * with O_APPEND (each entry is one write, so lines from the CLI and a running server never interleave).
 */
import { mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { newest, parseAuditEntry } from "../audit-entries.js";
import type { AuditLog } from "../types.js";

/** The file's name inside the data directory. */
export const AUDIT_FILE_NAME = "audit.log";

/** The audit log in `dir` (the data directory). */
export function createFileAuditLog(options: { dir: string }): AuditLog & { readonly location: string } {
  const path = join(options.dir, AUDIT_FILE_NAME);
  let tightened = false;
  return {
    location: path,
    async append(entry) {
      await mkdir(options.dir, { recursive: true, mode: 0o700 });
      const handle = await open(path, "a", 0o600);
      try {
        // A file made by hand or by an older umask gets the mode it should have, once per process.
        if (!tightened && process.platform !== "win32") await handle.chmod(0o600);
        tightened = true;
        await handle.write(`${JSON.stringify(entry)}\n`);
      } finally {
        await handle.close();
      }
    },
    async read(readOptions = {}) {
      let text: string;
      try {
        text = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
      const entries = text.split("\n").flatMap((line) => {
        const entry = line.trim() === "" ? undefined : parseAuditEntry(line);
        return entry === undefined ? [] : [entry];
      });
      return newest(entries, readOptions.limit);
    },
  };
}
