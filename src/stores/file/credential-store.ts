/**
 * The file {@link CredentialStore}, the one place a single cursor-bridge keeps Cursor credentials: `<configDir>/credentials.json`
 * (the default account; a named account's record is `<configDir>/accounts/<name>.json`), mode 0600 inside a 0700
 * directory, written atomically (temp file in the same directory, fsync, rename). A file we cannot parse is never
 * overwritten silently: the caller must pass `overwriteInvalid` after telling the user.
 */
import { randomUUID } from "node:crypto";
import { type BigIntStats, statSync } from "node:fs";
import { chmod, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { ProxyError } from "../../util/errors.js";
import { makeDir } from "../../util/make-dir.js";
import { checkAccountName } from "../accounts.js";
import { checkStoredCredentials, credentialRecord } from "../credentials.js";
import { type CredentialStore, DEFAULT_ACCOUNT, type StoredCredentials } from "../types.js";

/** Options of {@link createFileCredentialStore}. */
export interface FileCredentialStoreOptions {
  /** Directory holding credentials.json (from config `configDir`). */
  configDir: string;
  /** A named account: its record is `<configDir>/accounts/<account>.json`. @default the default account */
  account?: string | undefined;
  /** Skips POSIX permission handling on Windows. @default process.platform */
  platform?: NodeJS.Platform;
  /** @default () => new Date() */
  now?: () => Date;
}

/** File name inside the config directory. */
export const CREDENTIALS_FILE_NAME = "credentials.json";

/** Folder of the named accounts' records inside the config directory. */
export const ACCOUNTS_DIR_NAME = "accounts";

/** Where an account's record lives. */
export function credentialFilePath(configDir: string, account: string = DEFAULT_ACCOUNT): string {
  return account === DEFAULT_ACCOUNT
    ? join(configDir, CREDENTIALS_FILE_NAME)
    : join(configDir, ACCOUNTS_DIR_NAME, `${checkAccountName(account)}.json`);
}

function isMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

/** Builds the error for a file we cannot use; names the path and the offending fields, never their values. */
function invalidFileError(path: string, reason: string, login: string, cause?: unknown): ProxyError {
  return new ProxyError(
    "unauthenticated",
    `The credential file ${path} is not a valid cursor-bridge credential file (${reason}). ` +
      `It was left untouched: move it away, or run \`${login}\` to replace it.`,
    { cause, detail: "invalid_credentials_file" },
  );
}

function parseCredentials(path: string, text: string, login: string): StoredCredentials {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalidFileError(path, "not JSON", login, error);
  }
  const checked = checkStoredCredentials(json);
  if (checked.ok) return checked.credentials;
  throw invalidFileError(path, `unexpected or missing fields: ${checked.fields.join(", ")}`, login);
}

/** The same file, unchanged since `before`: inode, size, and the times of its last change of content or status. */
function sameFile(before: BigIntStats, now: BigIntStats): boolean {
  return (
    before.ino === now.ino &&
    before.dev === now.dev &&
    before.size === now.size &&
    before.mtimeNs === now.mtimeNs &&
    before.ctimeNs === now.ctimeNs
  );
}

/** Tightens permissions that are looser than wanted; no-op on Windows. `current`: the mode a `stat` just read. */
async function tighten(path: string, mode: number, platform: NodeJS.Platform, current?: number): Promise<void> {
  if (platform === "win32") return;
  if ((current ?? (await stat(path)).mode & 0o777) !== mode) await chmod(path, mode);
}

/** Writes `contents` to `path` atomically with mode 0600: temp file in the same dir, fsync, rename, fsync dir. */
async function writeAtomically(path: string, dir: string, contents: string, platform: NodeJS.Platform): Promise<void> {
  const temp = join(dir, `.${basename(path)}.${randomUUID()}.tmp`);
  const handle = await open(temp, "wx", 0o600);
  try {
    try {
      if (platform !== "win32") await handle.chmod(0o600);
      await handle.writeFile(contents, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  if (platform === "win32") return;
  // Persist the rename itself; without this a crash can leave the old file in place.
  const dirHandle = await open(dir, "r");
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

/** The default store: `<configDir>/credentials.json` (or a named account's record). */
export function createFileCredentialStore(options: FileCredentialStoreOptions): CredentialStore {
  const account = options.account ?? DEFAULT_ACCOUNT;
  const path = credentialFilePath(options.configDir, account);
  const dir = dirname(path);
  const login = account === DEFAULT_ACCOUNT ? "cursor-bridge login" : `cursor-bridge login --account ${account}`;
  const platform = options.platform ?? process.platform;
  const now = options.now ?? (() => new Date());

  /**
   * The file as last read: its identity and the credentials it held. The token source loads the credentials before
   * every Run (to see another process's refresh), and reading the file took five trips through libuv's thread pool
   * (open, fstat, read, close, then the permission check), about 160 µs on a loaded machine, in front of the Run.
   * One `stat` now tells whether the file is still the one read: an atomic save replaces its inode, an edit in place
   * changes its mtime and ctime, and a file whose permissions are not 0600 goes the long way (read and tighten) as
   * before. The stat is synchronous: a stat of a small local file is a few µs on the main thread, where the thread
   * pool's round trip still kept every Run's request waiting for the next turn of the event loop (tens of µs, more
   * when the loop is busy).
   */
  let lastRead: { stats: BigIntStats; credentials: StoredCredentials } | undefined;

  async function readText(): Promise<string | undefined> {
    try {
      return await readFile(path, "utf8");
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw new ProxyError("internal", `Could not read the credential file ${path}.`, { cause: error });
    }
  }

  return {
    location: path,
    async load() {
      let stats: BigIntStats | undefined;
      try {
        stats = statSync(path, { bigint: true });
      } catch (error) {
        lastRead = undefined;
        if (isMissing(error)) return undefined;
        throw new ProxyError("internal", `Could not read the credential file ${path}.`, { cause: error });
      }
      const last = lastRead;
      if (
        last !== undefined &&
        sameFile(last.stats, stats) &&
        (platform === "win32" || (stats.mode & 0o777n) === 0o600n)
      ) {
        return structuredClone(last.credentials);
      }
      lastRead = undefined;
      const text = await readText();
      if (text === undefined) return undefined;
      const credentials = parseCredentials(path, text, login);
      // Best effort: a file someone else owns cannot be chmod-ed by us, but it is still readable credentials.
      await tighten(path, 0o600, platform, Number(stats.mode & 0o777n)).catch(() => undefined);
      // The stats taken before the read: a change in between makes the next load read again.
      lastRead = { stats, credentials: structuredClone(credentials) };
      return credentials;
    },
    async save(input, saveOptions = {}) {
      const existing = await readText();
      if (existing !== undefined && !saveOptions.overwriteInvalid) parseCredentials(path, existing, login);
      const record = credentialRecord(input, now());
      await makeDir(dir);
      if (dir !== options.configDir) await tighten(options.configDir, 0o700, platform);
      await tighten(dir, 0o700, platform);
      await writeAtomically(path, dir, `${JSON.stringify(record, null, 2)}\n`, platform);
      return record;
    },
    async clear() {
      try {
        await unlink(path);
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw new ProxyError("internal", `Could not remove the credential file ${path}.`, { cause: error });
      }
    },
  };
}
