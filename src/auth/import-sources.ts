/**
 * Readers for the places Cursor's own clients keep tokens (docs/protocol.md §3.4): the cursor-agent CLI's
 * auth.json, its macOS keychain items, and the Cursor IDE's SQLite `state.vscdb` (read by ./sqlite-table.ts, no native
 * build and no SQLite engine). Each reader returns what it found plus a short problem string; problem strings are fixed texts, never
 * parser messages, because those can quote the file (and so a token).
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import * as z from "zod";
import { readSqliteTable } from "./sqlite-table.js";

/** Tokens found in one place, with the names of the keys that held them. */
export interface FoundTokens {
  accessToken?: string;
  refreshToken?: string;
  apiKey?: string;
  email?: string;
  /** Names of the keys/items that had a value (e.g. `accessToken`, `cursorAuth/refreshToken`). */
  keys: string[];
}

/** Result of one reader. */
export type ReadOutcome =
  | { status: "found"; tokens: FoundTokens }
  | { status: "missing" }
  | { status: "unreadable"; problem: string };

/** Runs a program and resolves to its stdout; rejects on non-zero exit or timeout. */
export type CommandRunner = (file: string, args: string[], options: { timeoutMs: number }) => Promise<string>;

/** Production runner: execFile (no shell) with a timeout. Used only to read keychain items. */
export const defaultCommandRunner: CommandRunner = (file, args, options) =>
  new Promise((resolve, reject) => {
    execFile(file, args, { timeout: options.timeoutMs, encoding: "utf8", windowsHide: true }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout);
    });
  });

function isMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ENOENT";
}

const nonEmpty = z.string().min(1).optional().catch(undefined);
const authFileSchema = z.looseObject({ accessToken: nonEmpty, refreshToken: nonEmpty, apiKey: nonEmpty });

/** Reads the cursor-agent CLI's `auth.json` (`{accessToken, refreshToken, apiKey?}`). */
export async function readCliAuthFile(path: string): Promise<ReadOutcome> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return isMissing(error) ? { status: "missing" } : { status: "unreadable", problem: "the file could not be read" };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { status: "unreadable", problem: "the file is not valid JSON" };
  }
  const parsed = authFileSchema.safeParse(json);
  if (!parsed.success) return { status: "unreadable", problem: "the file is not a JSON object" };
  const tokens: FoundTokens = { keys: [] };
  for (const key of ["accessToken", "refreshToken", "apiKey"] as const) {
    const value = parsed.data[key];
    if (value !== undefined) {
      tokens[key] = value;
      tokens.keys.push(key);
    }
  }
  return { status: "found", tokens };
}

/** Keychain service names used by the cursor-agent CLI on macOS (§3.4). */
export const KEYCHAIN_SERVICES = {
  accessToken: "cursor-access-token",
  refreshToken: "cursor-refresh-token",
  apiKey: "cursor-api-key",
} as const;

/** Reads the cursor-agent CLI's keychain items with `security find-generic-password -s <service> -w`. */
export async function readKeychain(runner: CommandRunner, timeoutMs: number): Promise<ReadOutcome> {
  const tokens: FoundTokens = { keys: [] };
  for (const [key, service] of Object.entries(KEYCHAIN_SERVICES) as [keyof typeof KEYCHAIN_SERVICES, string][]) {
    try {
      const value = (await runner("security", ["find-generic-password", "-s", service, "-w"], { timeoutMs })).trim();
      if (value !== "") {
        tokens[key] = value;
        tokens.keys.push(service);
      }
    } catch {
      // Exit status 44 means "item not found"; any other failure (denied prompt, timeout) also just means "not here".
    }
  }
  return tokens.keys.length === 0 ? { status: "missing" } : { status: "found", tokens };
}

/** ItemTable keys the Cursor IDE stores its session under (§3.4). */
export const IDE_KEYS = {
  accessToken: "cursorAuth/accessToken",
  refreshToken: "cursorAuth/refreshToken",
  email: "cursorAuth/cachedEmail",
} as const;

/** ItemTable values are TEXT or BLOB; some builds store JSON-quoted strings. */
function toText(value: unknown): string | undefined {
  const text = value instanceof Uint8Array ? new TextDecoder().decode(value) : typeof value === "string" ? value : "";
  const trimmed = text.trim();
  if (trimmed.startsWith('"') && trimmed.endsWith('"')) {
    try {
      const unquoted: unknown = JSON.parse(trimmed);
      return typeof unquoted === "string" && unquoted !== "" ? unquoted : undefined;
    } catch {
      return undefined;
    }
  }
  return trimmed === "" ? undefined : trimmed;
}

/** The IDE's session keys from ItemTable; throws when the bytes are not a database with that table. */
function queryIdeKeys(bytes: Uint8Array): FoundTokens {
  const rows = readSqliteTable(bytes, "ItemTable");
  if (rows === undefined) throw new Error("no ItemTable");
  const tokens: FoundTokens = { keys: [] };
  for (const field of Object.keys(IDE_KEYS) as (keyof typeof IDE_KEYS)[]) {
    const row = rows.find(([key]) => key === IDE_KEYS[field]);
    const value = row === undefined ? undefined : toText(row[1]);
    if (value === undefined) continue;
    tokens[field] = value;
    tokens.keys.push(IDE_KEYS[field]);
  }
  return tokens;
}

/**
 * Reads the Cursor IDE's `state.vscdb`. The file is read into memory once; pages still in a `-wal` file are not seen,
 * which only matters if the IDE wrote the tokens seconds ago.
 */
export async function readIdeStateDb(path: string): Promise<ReadOutcome> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    return isMissing(error) ? { status: "missing" } : { status: "unreadable", problem: "the file could not be read" };
  }
  try {
    return { status: "found", tokens: queryIdeKeys(bytes) };
  } catch {
    return { status: "unreadable", problem: "the file is not a SQLite database with an ItemTable" };
  }
}
