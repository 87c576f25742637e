/**
 * The workspace description sent in `RequestContext.env` (docs/protocol.md §4.5 RequestContextEnv). Built once
 * from the machine at the composition root (or by this default), never read from globals deeper in the backend.
 */
import { readFileSync, readlinkSync, statSync } from "node:fs";
import { platform, release } from "node:os";

/** What the server is told about the user's workspace. cursor-bridge never runs anything there itself. */
export interface WorkspaceEnvironment {
  /** e.g. `linux 6.8.0` (CARL: `${platform} ${release}`). */
  osVersion: string;
  /** Absolute workspace path. */
  workspacePath: string;
  /** Shell name, e.g. `bash`. */
  shell: string;
  /** IANA time zone. */
  timeZone: string;
}

/** Inputs of {@link defaultWorkspaceEnvironment}; every field has a production default. */
export interface WorkspaceEnvironmentInputs {
  platform?: NodeJS.Platform;
  release?: string;
  cwd?: string;
  shell?: string;
  timeZone?: string;
}

/**
 * The one place that reads the machine for the workspace defaults. The time zone is read on first use (see
 * {@link systemTimeZone}), so a server spends nothing on it before it serves.
 */
export function defaultWorkspaceEnvironment(inputs: WorkspaceEnvironmentInputs = {}): WorkspaceEnvironment {
  const os = inputs.platform ?? platform();
  let timeZone = inputs.timeZone;
  return {
    osVersion: `${os} ${inputs.release ?? release()}`,
    workspacePath: inputs.cwd ?? process.cwd(),
    shell: inputs.shell ?? (os === "win32" ? "powershell" : "bash"),
    get timeZone() {
      timeZone ??= systemTimeZone();
      return timeZone;
    },
  };
}

/** Where the machine's zone can be read from; every field has the real machine's default. */
export interface TimeZoneSources {
  /** `TZ`, as the C library reads it (a leading `:` allowed). @default process.env.TZ */
  tz?: string | undefined;
  /** The tz database folder. @default process.env.TZDIR ?? /usr/share/zoneinfo */
  zoneinfoDir?: string;
  /** Target of the /etc/localtime link, or undefined when it is not a link. */
  localtimeLink?: () => string | undefined;
  /** Contents of /etc/timezone (Debian), or undefined. */
  timezoneFile?: () => string | undefined;
  /** Whether a zone file exists in `zoneinfoDir`. */
  zoneExists?: (path: string) => boolean;
  /** What Intl says: only asked when nothing above names a zone (it pages in ICU's data, about 5 MB of RSS). */
  intl?: () => string;
}

const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
/** The names Intl reports as plain `UTC` (as V8 canonicalizes them). */
const UTC_ALIASES = new Set(
  ["UTC", "UCT", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich", "Universal", "Zulu"].flatMap((n) => [n, `Etc/${n}`]),
);

const orUndefined = <T>(read: () => T): T | undefined => {
  try {
    return read();
  } catch {
    return undefined;
  }
};

/**
 * The machine's IANA zone, read where the C library reads it (`TZ`, then the /etc/localtime link, then Debian's
 * /etc/timezone), each accepted only when it names a zone file; Intl (ICU) decides only when none does. A region name
 * is sent as the machine spells it (Intl would give a CLDR alias, e.g. `Asia/Calcutta` for `Asia/Kolkata`); the UTC
 * names become `UTC`, as Intl says.
 */
export function systemTimeZone(sources: TimeZoneSources = {}): string {
  const dir = sources.zoneinfoDir ?? process.env.TZDIR ?? "/usr/share/zoneinfo";
  const exists = sources.zoneExists ?? ((path: string) => orUndefined(() => statSync(path).isFile()) === true);
  const named = (name: string | undefined): string | undefined => {
    const zone = name?.trim().replace(/^:/, "");
    if (zone === undefined || !ZONE_NAME.test(zone) || !exists(`${dir}/${zone}`)) return undefined;
    return UTC_ALIASES.has(zone) ? "UTC" : zone;
  };
  const tz = "tz" in sources ? sources.tz : process.env.TZ;
  // A set TZ rules, even a POSIX rule string (`CET-1CEST,…`) that only Intl can name.
  if (tz !== undefined && tz !== "") return named(tz) ?? (sources.intl ?? intlTimeZone)();
  const link = (sources.localtimeLink ?? (() => orUndefined(() => readlinkSync("/etc/localtime"))))();
  const linked = link?.split("/zoneinfo/")[1];
  const timezoneFile = sources.timezoneFile ?? (() => orUndefined(() => readFileSync("/etc/timezone", "utf8")));
  return named(linked) ?? named(timezoneFile()) ?? (sources.intl ?? intlTimeZone)();
}

function intlTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
