/**
 * The one place cursor-bridge keeps Cursor credentials: `<configDir>/credentials.json`, mode 0600 inside a 0700
 * directory, written atomically (temp file in the same directory, fsync, rename). A file we cannot parse is never
 * overwritten silently: the caller must pass `overwriteInvalid` after telling the user.
 */
import { randomUUID } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ProxyError } from "../util/errors.js";

/** Where a stored credential can come from. */
const CREDENTIAL_SOURCES = ["login", "api-key", "import:cli", "import:ide", "env"] as const;

/** Where a stored credential came from. */
export type CredentialSource = (typeof CREDENTIAL_SOURCES)[number];

/** Credentials as stored (on-disk shape, version 1). `savedAt` is an ISO timestamp. */
export interface StoredCredentials {
  version: 1;
  accessToken: string;
  refreshToken: string;
  apiKey?: string | undefined;
  source: CredentialSource;
  email?: string | undefined;
  userId?: string | undefined;
  savedAt: string;
}

/**
 * Checks a parsed credential record. Strict: a record with other keys is someone else's. Hand-written rather than a
 * zod schema because `serve` reads the file before it prints its listening line, where loading zod costs more than
 * everything else it does. The refusal names fields, never values.
 */
export function checkStoredCredentials(
  value: unknown,
): { ok: true; credentials: StoredCredentials } | { ok: false; fields: string[] } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, fields: ["(root)"] };
  const record = value as Record<string, unknown>;
  const fields: string[] = [];
  const nonEmpty = (key: string) => typeof record[key] === "string" && record[key] !== "";
  const optionalString = (key: string, min: number) =>
    record[key] === undefined || (typeof record[key] === "string" && (record[key] as string).length >= min);
  if (record.version !== 1) fields.push("version");
  if (!nonEmpty("accessToken")) fields.push("accessToken");
  if (!nonEmpty("refreshToken")) fields.push("refreshToken");
  if (!optionalString("apiKey", 1)) fields.push("apiKey");
  if (!(CREDENTIAL_SOURCES as readonly unknown[]).includes(record.source)) fields.push("source");
  if (!optionalString("email", 0)) fields.push("email");
  if (!optionalString("userId", 0)) fields.push("userId");
  if (typeof record.savedAt !== "string") fields.push("savedAt");
  const known = new Set(["version", "accessToken", "refreshToken", "apiKey", "source", "email", "userId", "savedAt"]);
  for (const key of Object.keys(record)) if (!known.has(key)) fields.push(key);
  return fields.length === 0
    ? { ok: true, credentials: record as unknown as StoredCredentials }
    : { ok: false, fields };
}

/** What callers hand to `save`; version and savedAt are filled in. */
export type CredentialsInput = Omit<StoredCredentials, "version" | "savedAt">;

/** Options of `save`. */
export interface SaveOptions {
  /** Replace a file that failed validation (the login command passes this after telling the user). */
  overwriteInvalid?: boolean;
}

/** Storage for the single credential record. */
export interface CredentialStore {
  /** Human-readable location (a path for the file store); safe to print. */
  readonly location: string;
  /** The stored credentials, or undefined if there are none. @throws ProxyError when the file is corrupt or foreign. */
  load(): Promise<StoredCredentials | undefined>;
  /** Replaces the stored credentials. @throws ProxyError when an invalid file exists and overwriteInvalid is not set. */
  save(credentials: CredentialsInput, options?: SaveOptions): Promise<StoredCredentials>;
  /** Removes the stored credentials; resolves to whether anything was removed. */
  clear(): Promise<boolean>;
}

/** Options of {@link createFileCredentialStore}. */
export interface FileCredentialStoreOptions {
  /** Directory holding credentials.json (from config `configDir`). */
  configDir: string;
  /** Skips POSIX permission handling on Windows. @default process.platform */
  platform?: NodeJS.Platform;
  /** @default () => new Date() */
  now?: () => Date;
}

/** File name inside the config directory. */
export const CREDENTIALS_FILE_NAME = "credentials.json";

function isMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

/** Builds the error for a file we cannot use; names the path and the offending fields, never their values. */
function invalidFileError(path: string, reason: string, cause?: unknown): ProxyError {
  return new ProxyError(
    "unauthenticated",
    `The credential file ${path} is not a valid cursor-bridge credential file (${reason}). ` +
      "It was left untouched: move it away, or run `cursor-bridge login` to replace it.",
    { cause, detail: "invalid_credentials_file" },
  );
}

function parseCredentials(path: string, text: string): StoredCredentials {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalidFileError(path, "not JSON", error);
  }
  const checked = checkStoredCredentials(json);
  if (checked.ok) return checked.credentials;
  throw invalidFileError(path, `unexpected or missing fields: ${checked.fields.join(", ")}`);
}

/** Validates a record about to be saved; names missing fields only. */
function toRecord(input: CredentialsInput, savedAt: Date): StoredCredentials {
  const record = { ...input, version: 1, savedAt: savedAt.toISOString() };
  // Absent optional fields are left out, as JSON would.
  for (const key of Object.keys(record) as Array<keyof typeof record>)
    if (record[key] === undefined) delete record[key];
  const checked = checkStoredCredentials(record);
  if (checked.ok) return checked.credentials;
  throw new ProxyError(
    "invalid_request",
    `Refusing to save incomplete credentials (fields: ${checked.fields.join(", ")}).`,
  );
}

/** Tightens permissions that are looser than wanted; no-op on Windows. */
async function tighten(path: string, mode: number, platform: NodeJS.Platform): Promise<void> {
  if (platform === "win32") return;
  const current = (await stat(path)).mode & 0o777;
  if (current !== mode) await chmod(path, mode);
}

/** Writes `contents` to `path` atomically with mode 0600: temp file in the same dir, fsync, rename, fsync dir. */
async function writeAtomically(path: string, dir: string, contents: string, platform: NodeJS.Platform): Promise<void> {
  const temp = join(dir, `.${CREDENTIALS_FILE_NAME}.${randomUUID()}.tmp`);
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

/** The default store: `<configDir>/credentials.json`. */
export function createFileCredentialStore(options: FileCredentialStoreOptions): CredentialStore {
  const dir = options.configDir;
  const path = join(dir, CREDENTIALS_FILE_NAME);
  const platform = options.platform ?? process.platform;
  const now = options.now ?? (() => new Date());

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
      const text = await readText();
      if (text === undefined) return undefined;
      const credentials = parseCredentials(path, text);
      // Best effort: a file someone else owns cannot be chmod-ed by us, but it is still readable credentials.
      await tighten(path, 0o600, platform).catch(() => undefined);
      return credentials;
    },
    async save(input, saveOptions = {}) {
      const existing = await readText();
      if (existing !== undefined && !saveOptions.overwriteInvalid) parseCredentials(path, existing);
      const record = toRecord(input, now());
      await mkdir(dir, { recursive: true, mode: 0o700 });
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

/** An in-memory store for tests and for hosts (the OpenCode plugin) that keep credentials themselves. */
export function createMemoryCredentialStore(
  initial?: StoredCredentials,
  now: () => Date = () => new Date(),
): CredentialStore {
  let current = initial;
  return {
    location: "memory",
    async load() {
      return current;
    },
    async save(input) {
      current = toRecord(input, now());
      return current;
    },
    async clear() {
      const had = current !== undefined;
      current = undefined;
      return had;
    },
  };
}
