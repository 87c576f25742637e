/**
 * Data directories hold conversation checkpoints and stored responses: they are the user's alone (0700). `mkdir`
 * with a mode only applies it to directories it creates, so a directory that already exists (made by hand, by an
 * older version, or by a tool with a 022 umask) keeps whatever mode it had. This tightens it when it is the user's
 * own, and warns when it is not (changing someone else's directory is not ours to do).
 */
import { chmod, stat } from "node:fs/promises";
import type { Logger } from "./logger.js";
import { makeDir } from "./make-dir.js";

export interface PrivateDirOptions {
  logger: Logger;
  /** The running user's id. @default process.getuid() (undefined on Windows, where modes do not apply) */
  uid?: number | undefined;
}

/** What {@link ensurePrivateDir} did to the directory. */
export type PrivateDirOutcome = "private" | "tightened" | "foreign" | "unsupported";

/** Creates `dir` (0700) if needed; an existing one open to group or others is tightened to 0700 when it is ours. */
export async function ensurePrivateDir(dir: string, options: PrivateDirOptions): Promise<PrivateDirOutcome> {
  await makeDir(dir);
  const uid = "uid" in options ? options.uid : process.getuid?.();
  if (uid === undefined || process.platform === "win32") return "unsupported";
  const info = await stat(dir);
  const open = info.mode & 0o077;
  if (open === 0) return "private";
  const mode = `0${(info.mode & 0o777).toString(8)}`;
  if (info.uid === uid) {
    await chmod(dir, 0o700);
    options.logger.info("tightened the data directory to mode 0700 (it was open to other users)", { dir, mode });
    return "tightened";
  }
  options.logger.warn(
    "the data directory belongs to another user and is open to others; conversations stored there are readable by them",
    { dir, mode, owner_uid: info.uid, fix: `chmod 700 ${dir}` },
  );
  return "foreign";
}
