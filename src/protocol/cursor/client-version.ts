/**
 * Resolves `x-cursor-client-version` (docs/protocol.md §2.1): `cli-<YYYY.MM.DD>-<7-hex sha>`.
 * Order: configuration, then env CURSOR_CLIENT_VERSION, then the newest installed cursor-agent (its versions folder,
 * §3.4), then a version the bridge learned from Cursor (client-version-heal.ts, kept in the data dir), then a built-in
 * recent default. The server rejects outdated clients (§8), so the source is reported and the outdated-client error
 * names the setting to change.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { cursorAgentVersionsDir } from "../../util/paths.js";

/** The newest CLI build the references name (cursor-protocol-addendum-3.md E8); used when nothing else is known. */
export const DEFAULT_CLIENT_VERSION = "cli-2026.10.01-e373342";

/** The setting names an outdated-client message points at. */
export const CLIENT_VERSION_SETTINGS = "--client-version / CURSOR_CLIENT_VERSION";

/** Where the resolved client version came from. */
export type ClientVersionSource = "config" | "env" | "cursor-agent" | "learned" | "default";

/** Inputs of {@link resolveClientVersion}. */
export interface ResolveClientVersionOptions {
  /** Value from the config file or the `--client-version` flag. */
  configured?: string;
  /** Environment (only CURSOR_CLIENT_VERSION is read). */
  env?: Record<string, string | undefined>;
  /** @default ~/.local/share/cursor-agent/versions (per platform, src/util/paths.ts) */
  agentVersionsDir?: string;
  /** A version learned from Cursor earlier (kept in the data dir), used before the default when newer than it. */
  learned?: string | undefined;
}

/** A resolved client version and its source. */
export interface ResolvedClientVersion {
  version: string;
  source: ClientVersionSource;
}

const VERSION_DIR = /^(\d{4})\.(\d{2})\.(\d{2})-([0-9a-f]{7,40})$/;

/** Normalises a configured value: a bare `2026.01.17-d239e66` gains the `cli-` prefix. */
function normalise(value: string): string {
  const trimmed = value.trim();
  return VERSION_DIR.test(trimmed) ? `cli-${trimmed}` : trimmed;
}

/** The newest `<YYYY.MM.DD-sha>` directory name in `dir`, or undefined (missing or unreadable folder). */
export function newestAgentVersion(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && VERSION_DIR.test(entry.name))
      .map((entry) => entry.name);
  } catch {
    return undefined;
  }
  // The date prefix sorts lexicographically; ties (same day) fall back to name order, which is deterministic.
  names.sort();
  return names.at(-1);
}

/** Resolves the client version (config → env → installed cursor-agent → default). */
export function resolveClientVersion(opts: ResolveClientVersionOptions = {}): ResolvedClientVersion {
  if (opts.configured !== undefined && opts.configured.trim() !== "") {
    return { version: normalise(opts.configured), source: "config" };
  }
  const fromEnv = opts.env?.CURSOR_CLIENT_VERSION;
  if (fromEnv !== undefined && fromEnv.trim() !== "") return { version: normalise(fromEnv), source: "env" };
  const dir =
    opts.agentVersionsDir ??
    cursorAgentVersionsDir({ env: opts.env ?? {}, platform: process.platform, homedir: homedir() });
  const newest = newestAgentVersion(dir);
  if (newest !== undefined) return { version: `cli-${newest}`, source: "cursor-agent" };
  if (opts.learned !== undefined && compareClientVersions(opts.learned, DEFAULT_CLIENT_VERSION) > 0) {
    return { version: opts.learned, source: "learned" };
  }
  return { version: DEFAULT_CLIENT_VERSION, source: "default" };
}

const DATED = /(\d{4})\.(\d{2})\.(\d{2})/;

/**
 * Orders two client versions by their build date (`cli-2026.10.01-e373342` after `cli-2026.09.18-9a7762b`); equal
 * dates (or versions without one) compare equal. Negative, zero or positive like a sort comparator.
 */
export function compareClientVersions(a: string, b: string): number {
  const da = DATED.exec(a)?.slice(1).join("") ?? "";
  const db = DATED.exec(b)?.slice(1).join("") ?? "";
  return da === db ? 0 : da < db ? -1 : 1;
}

/** A `cli-YYYY.MM.DD-sha` version (what the learned-version file and the install script must give). */
export function isCliVersion(value: string): boolean {
  return /^cli-\d{4}\.\d{2}\.\d{2}-[0-9a-f]{7,40}$/.test(value);
}

/**
 * The current build named by Cursor's install script (cursor-protocol-addendum-3.md E9): its
 * `downloads.cursor.com/lab/<YYYY.MM.DD-sha>/` path, as `cli-<YYYY.MM.DD-sha>`; the newest when several appear.
 */
export function buildFromInstallScript(script: string): string | undefined {
  const builds = [...script.matchAll(/downloads\.cursor\.com\/lab\/(\d{4}\.\d{2}\.\d{2}-[0-9a-f]{7,40})\//g)].map(
    (match) => `cli-${match[1]}`,
  );
  return builds.sort(compareClientVersions).at(-1);
}
