/**
 * Data directories hold conversation checkpoints, stored responses and the gateway's virtual keys: they are the
 * user's alone (0700). `mkdir` with a mode only applies it to directories it creates, so a directory that already
 * exists (made by hand, by an older version, or by a tool with a 022 umask) keeps whatever mode it had. This tightens
 * it when it is the user's own, and warns when it is not (changing someone else's directory is not ours to do).
 *
 * A directory other users could write into is refused when what it holds cannot be trusted: anyone who could write
 * there could have put a `keys.json` naming a key of their own (the gateway would then let them in), or a symbolic
 * link where the server appends its audit log. So a directory of the user's own that others can write into is first
 * searched for anything another user owns (root aside), and refused as it is when it holds any; and a directory of
 * another user's that every user can write into (`/tmp` itself) is not used at all.
 */
import { chmodSync, lstatSync, readdirSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { ProxyError } from "./errors.js";
import type { Logger } from "./logger.js";
import { makeDirSync } from "./make-dir.js";

export interface PrivateDirOptions {
  logger: Logger;
  /** The running user's id. @default process.getuid() (undefined on Windows, where modes do not apply) */
  uid?: number | undefined;
}

/** What {@link ensurePrivateDir} did to the directory. */
export type PrivateDirOutcome = "private" | "tightened" | "foreign" | "unsupported";

/** Entries of another user listed in the refusal at most (the search stops there). */
const MAX_LISTED = 5;
/** Folders deep the search goes (the stores nest two: `emulator/conversations/`). */
const MAX_DEPTH = 6;

/**
 * Entries under `dir` (not following symbolic links) owned by neither `uid` nor root, as `path (uid N)`, at most
 * {@link MAX_LISTED}.
 */
export function entriesOfOthers(dir: string, uid: number): string[] {
  const found: string[] = [];
  const visit = (folder: string, depth: number): void => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    for (const name of names) {
      if (found.length >= MAX_LISTED) return;
      const path = join(folder, name);
      let info: Stats;
      try {
        info = lstatSync(path);
      } catch {
        continue;
      }
      if (info.uid !== uid && info.uid !== 0) found.push(`${path} (uid ${info.uid})`);
      else if (info.isDirectory() && depth < MAX_DEPTH) visit(path, depth + 1);
    }
  };
  visit(dir, 1);
  return found;
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/** {@link ensurePrivateDirSync}, for callers that await (the stores). */
export async function ensurePrivateDir(dir: string, options: PrivateDirOptions): Promise<PrivateDirOutcome> {
  return ensurePrivateDirSync(dir, options);
}

/**
 * Creates `dir` (0700) if needed; an existing one open to group or others is tightened to 0700 when it is ours. Plain
 * system calls on the calling thread: it runs at start, when nothing else waits on the event loop (cli/data-dir.ts).
 * @throws ProxyError `invalid_request` when what the directory holds cannot be trusted (see the module comment).
 */
export function ensurePrivateDirSync(dir: string, options: PrivateDirOptions): PrivateDirOutcome {
  makeDirSync(dir);
  const uid = "uid" in options ? options.uid : process.getuid?.();
  if (uid === undefined || process.platform === "win32") return "unsupported";
  const info = statSync(dir);
  const open = info.mode & 0o077;
  if (open === 0) return "private";
  const mode = octal(info.mode);
  if (info.uid === uid) {
    // Readable by others only: nothing can have been put in it. Writable: look first at what others may have left
    // (a directory holding their files is shared: it is refused as it is, not closed under them).
    if ((info.mode & 0o022) !== 0) {
      const others = entriesOfOthers(dir, uid);
      if (others.length > 0) {
        throw new ProxyError(
          "invalid_request",
          `The data directory ${dir} is writable by other users (mode ${mode}) and holds files that are not ` +
            `yours: ${others.join(", ")}. Someone else may have put them there (a keys.json of theirs would let ` +
            `them in): look at them and remove them, then \`chmod 700 ${dir}\`; or use another --data-dir.`,
          { param: "dataDir", detail: "invalid_config" },
        );
      }
    }
    chmodSync(dir, 0o700);
    options.logger.info("tightened the data directory to mode 0700 (it was open to other users)", { dir, mode });
    return "tightened";
  }
  if ((info.mode & 0o002) !== 0) {
    throw new ProxyError(
      "invalid_request",
      `The data directory ${dir} belongs to another user (uid ${info.uid}) and every user of this machine can write ` +
        `into it (mode ${mode}): anyone could put files there that the server would trust (a keys.json of theirs ` +
        "would let them in). Use a directory of your own with --data-dir (or CURSOR_BRIDGE_DATA_DIR).",
      { param: "dataDir", detail: "invalid_config" },
    );
  }
  options.logger.warn(
    "the data directory belongs to another user and is open to others; conversations stored there are readable by them",
    { dir, mode, owner_uid: info.uid, fix: `chmod 700 ${dir}` },
  );
  return "foreign";
}
