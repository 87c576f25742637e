/**
 * The data directory of the file stores (`--data-dir`), checked and claimed before `serve` listens.
 *
 * - {@link prepareDataDir}: created when missing and a file written and removed in it, so a directory that cannot be
 *   used (read-only, a file on the path, a virtual file system) stops the command with a message naming `--data-dir`
 *   and the cause, before any banner, instead of a raw EACCES from deep inside the stores after it.
 * - {@link lockDataDir}: one `serve` per data directory. The gateway's spend (`spend.json`) and `serve.json` are read,
 *   changed and written whole by the server that owns them, so two servers on one directory lose each other's
 *   writes. `serve.lock` names the owner (machine, pid, a random id of the process, address); a second `serve`
 *   refuses to start while that process lives, and takes the lock over only when it names this machine and its
 *   process is gone (killed, crashed) or is not a cursor-bridge (its pid reused: its command line names no
 *   cursor-bridge and no cursor-bridge answers `/health` at the lock's address), or names our own pid with another
 *   process's id (a restarted container, whose server runs as pid 1 again). A lock from another machine (two
 *   containers sharing a volume both run as pid 1, and a pid of another machine means nothing here), or of an older
 *   version (it names no machine, so it may be such a container's), is never taken over: it is removed by hand once
 *   that server is gone.
 *   The conversation records are built for several processes (`acp` processes an editor starts share them with a
 *   `serve`), so `acp` takes no lock.
 *
 * Both run their few file operations as plain system calls on the calling thread: at start nothing else waits on the
 * event loop, and each `fs/promises` call is a round trip through libuv's thread pool (the ten of them cost serve's
 * start about 4 ms of waiting before its banner on the benchmark machine; the calls themselves take microseconds).
 */
import { randomUUID } from "node:crypto";
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { writeFileAtomicSync } from "../stores/file/atomic-write.js";
import { withFileLockNow } from "../stores/file/file-lock.js";
import { ProxyError } from "../util/errors.js";
import { type Logger, silentLogger } from "../util/logger.js";
import { makeDirSync } from "../util/make-dir.js";
import { ensurePrivateDirSync } from "../util/private-dir.js";
import { processAlive, runsCursorBridge, servingBridgeVersion } from "./runtime-file.js";

/** What an errno means for a data directory, in words. */
function causeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return `permission denied (${code})`;
    case "EROFS":
      return "read-only file system (EROFS)";
    case "ENOTDIR":
      return "a part of the path is a file, not a directory (ENOTDIR)";
    case "ENOENT":
      return "the file system does not let a directory be created there (ENOENT)";
    case "ENOSPC":
      return "no space left on the device (ENOSPC)";
    case "EDQUOT":
      return "disk quota exceeded (EDQUOT)";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Creates the data directory when missing, makes it private (util/private-dir.ts: one that others could have put
 * files into is refused) and checks that files can be written in it; throws a usage error (exit 2) naming
 * `--data-dir` and the cause otherwise. The test file gets a random name and is created exclusively, so a symbolic
 * link left at its name is never followed (a predictable name would let whoever planted it truncate the link's target).
 */
export function prepareDataDir(dir: string, logger: Logger = silentLogger): void {
  const probe = join(dir, `.write-test-${process.pid}-${randomUUID()}`);
  try {
    makeDirSync(dir);
    ensurePrivateDirSync(dir, { logger });
    writeFileSync(probe, "", { mode: 0o600, flag: "wx" });
    unlinkSync(probe);
  } catch (error) {
    if (error instanceof ProxyError) throw error;
    throw new ProxyError(
      "invalid_request",
      `The data directory ${dir} cannot be used: ${causeOf(error)}. Pass one this user can write with --data-dir ` +
        "(or CURSOR_BRIDGE_DATA_DIR).",
      { cause: error, param: "dataDir", detail: "invalid_config" },
    );
  }
}

/** What `serve.lock` holds. */
interface LockRecord {
  pid: number;
  /** The machine (os.hostname(): a container's own name) the owner runs on; absent in a lock of an older version. */
  hostname?: string;
  /** A random id of the owning process, told apart from an earlier process with the same pid. */
  instance?: string;
  /** Where the owner listens. */
  host?: string;
  port?: number;
  startedAt: string;
}

/** The lock of one data directory, held by this process. */
export interface DataDirLock {
  /** Removes the lock (also done when the process exits). */
  release(): void;
}

/** The lock file of a data directory. */
export function dataDirLockPath(dataDir: string): string {
  return join(dataDir, "serve.lock");
}

/** Data directories whose lock this process holds (a second `serve` in one process is refused like any other). */
const held = new Set<string>();

/** This process's id in the locks it writes. */
const INSTANCE = randomUUID();

function readLock(path: string): LockRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Partial<LockRecord>;
    return typeof value.pid === "number" && Number.isInteger(value.pid) && value.pid > 0
      ? (value as LockRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The owner of a lock, or undefined when the lock may be taken over: unreadable, or naming this machine and a process
 * that is gone or is not a cursor-bridge (or our own pid with another process's id: an earlier process that had this
 * pid, a container restarted). A lock naming no machine (an older version's) is never taken over.
 */
async function liveOwner(dataDir: string, record: LockRecord | undefined): Promise<LockRecord | undefined> {
  if (record === undefined) return undefined;
  // Another machine's, or an older version's (it names no machine: two containers sharing a volume both run `serve` as
  // pid 1, and a server in the other one is neither visible nor reachable from here): its pid cannot be checked.
  if (record.hostname === undefined || record.hostname !== hostname()) return record;
  if (record.pid === process.pid) return record.instance === INSTANCE && held.has(dataDir) ? record : undefined;
  if (!processAlive(record.pid)) return undefined;
  // A process that cannot be told apart (not visible to this user) counts as the owner.
  if (runsCursorBridge(record.pid) !== false) return record;
  // Its command line does not name cursor-bridge, which a live server's need not either (started through a link or
  // a wrapper of another name): a cursor-bridge still answering at the lock's address keeps it.
  if (record.port === undefined) return undefined;
  return (await servingBridgeVersion(record.host ?? "127.0.0.1", record.port)) === undefined ? undefined : record;
}

function refusal(dataDir: string, owner: LockRecord): ProxyError {
  const where =
    owner.port === undefined
      ? "still starting"
      : `port ${owner.port}${owner.host === undefined ? "" : ` on ${owner.host}`}`;
  const path = dataDirLockPath(dataDir);
  const here = owner.hostname === hostname();
  const machine = here
    ? ""
    : owner.hostname === undefined
      ? ", on a machine its lock (an older version's) does not name"
      : `, on host ${owner.hostname}`;
  return new ProxyError(
    "invalid_request",
    `Another cursor-bridge serve (pid ${owner.pid}${machine}, ${where}) already uses the data directory ${dataDir}: ` +
      "two servers on one data directory overwrite each other's spend and state. Use that server, stop it, or give " +
      "this one another --data-dir; to run several instances, share a Redis store (--store redis://…, see " +
      "`cursor-bridge serve --help`). " +
      (here
        ? `If process ${owner.pid} is not a cursor-bridge, remove ${path}.`
        : `A process of another host cannot be checked from here: if that server is gone, remove ${path}.`),
    { param: "dataDir", detail: "failed_precondition" },
  );
}

/**
 * Takes the data directory's lock for this `serve`, bound to `address`; throws a usage error naming the other server
 * when a live cursor-bridge, or a process of another machine, holds it. A lock of this machine (or of no machine named)
 * whose process is gone or is not a cursor-bridge is taken over.
 */
export async function lockDataDir(
  dataDir: string,
  address: { host: string; port: number },
  now: () => number = Date.now,
): Promise<DataDirLock> {
  const path = dataDirLockPath(dataDir);
  const record: LockRecord = {
    pid: process.pid,
    hostname: hostname(),
    instance: INSTANCE,
    ...address,
    startedAt: new Date(now()).toISOString(),
  };
  // The check and the write happen under a short-lived guard, so two servers starting together cannot both see a
  // stale lock and both take it.
  await withFileLockNow(`${path}.guard`, async () => {
    const owner = await liveOwner(dataDir, readLock(path));
    if (owner !== undefined) throw refusal(dataDir, owner);
    writeFileAtomicSync(path, `${JSON.stringify(record)}\n`);
  });
  held.add(dataDir);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    held.delete(dataDir);
    process.off("exit", release);
    // Only while it is still ours (a lock taken over after this process was thought gone is the other's).
    const current = readLock(path);
    if (current?.pid !== process.pid || current.instance !== INSTANCE || current.hostname !== hostname()) return;
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  };
  process.once("exit", release);
  return { release };
}
