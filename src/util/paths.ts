/**
 * Where cursor-bridge keeps its files and where Cursor's own clients keep theirs (docs/protocol.md §3.4).
 * Every function is a pure function of {env, platform, homedir}; nothing here reads process.env or touches the disk,
 * so tests can ask for the Windows or macOS layout on any machine.
 */
import { posix, win32 } from "node:path";

/** Environment variables as a plain record (callers pass process.env in). */
export type EnvRecord = Readonly<Record<string, string | undefined>>;

/** The inputs every path function depends on. */
export interface PathEnvironment {
  env: EnvRecord;
  /** `process.platform` of the machine the paths are for. */
  platform: NodeJS.Platform;
  /** The user's home directory. */
  homedir: string;
}

/** Directory name cursor-bridge uses under each base directory. */
export const APP_DIR_NAME = "cursor-bridge";

function pathApi(platform: NodeJS.Platform): typeof posix {
  return platform === "win32" ? win32 : posix;
}

/** Reads an env variable, treating "" as unset. Only absolute values count, as the XDG spec requires. */
function envDir(p: PathEnvironment, name: string): string | undefined {
  const value = p.env[name];
  if (value === undefined || value === "") return undefined;
  return pathApi(p.platform).isAbsolute(value) ? value : undefined;
}

/** %APPDATA% (Roaming) on Windows, with the documented fallback under the profile. */
function windowsAppData(p: PathEnvironment): string {
  return envDir(p, "APPDATA") ?? win32.join(p.homedir, "AppData", "Roaming");
}

/** %LOCALAPPDATA% on Windows, with the documented fallback under the profile. */
function windowsLocalAppData(p: PathEnvironment): string {
  return envDir(p, "LOCALAPPDATA") ?? win32.join(p.homedir, "AppData", "Local");
}

/** Base of the user's configuration files: $XDG_CONFIG_HOME or ~/.config (what Electron also uses on Linux). */
function xdgConfigHome(p: PathEnvironment): string {
  return envDir(p, "XDG_CONFIG_HOME") ?? posix.join(p.homedir, ".config");
}

/**
 * cursor-bridge's configuration directory (credentials.json, config.json).
 * Linux: $XDG_CONFIG_HOME/cursor-bridge or ~/.config/cursor-bridge; macOS: ~/Library/Application Support/cursor-bridge
 * (an explicit $XDG_CONFIG_HOME wins); Windows: %APPDATA%\cursor-bridge.
 */
export function configDir(p: PathEnvironment): string {
  if (p.platform === "win32") return win32.join(windowsAppData(p), APP_DIR_NAME);
  const xdg = envDir(p, "XDG_CONFIG_HOME");
  if (xdg !== undefined) return posix.join(xdg, APP_DIR_NAME);
  if (p.platform === "darwin") return posix.join(p.homedir, "Library", "Application Support", APP_DIR_NAME);
  return posix.join(p.homedir, ".config", APP_DIR_NAME);
}

/**
 * cursor-bridge's data directory (blob store, checkpoints).
 * Linux: $XDG_DATA_HOME/cursor-bridge or ~/.local/share/cursor-bridge; macOS: ~/Library/Application Support/cursor-bridge
 * (an explicit $XDG_DATA_HOME wins); Windows: %LOCALAPPDATA%\cursor-bridge.
 */
export function dataDir(p: PathEnvironment): string {
  if (p.platform === "win32") return win32.join(windowsLocalAppData(p), APP_DIR_NAME);
  const xdg = envDir(p, "XDG_DATA_HOME");
  if (xdg !== undefined) return posix.join(xdg, APP_DIR_NAME);
  if (p.platform === "darwin") return posix.join(p.homedir, "Library", "Application Support", APP_DIR_NAME);
  return posix.join(p.homedir, ".local", "share", APP_DIR_NAME);
}

/**
 * cursor-bridge's cache directory (safe to delete).
 * Linux: $XDG_CACHE_HOME/cursor-bridge or ~/.cache/cursor-bridge; macOS: ~/Library/Caches/cursor-bridge;
 * Windows: %LOCALAPPDATA%\cursor-bridge\Cache.
 */
export function cacheDir(p: PathEnvironment): string {
  if (p.platform === "win32") return win32.join(windowsLocalAppData(p), APP_DIR_NAME, "Cache");
  const xdg = envDir(p, "XDG_CACHE_HOME");
  if (xdg !== undefined) return posix.join(xdg, APP_DIR_NAME);
  if (p.platform === "darwin") return posix.join(p.homedir, "Library", "Caches", APP_DIR_NAME);
  return posix.join(p.homedir, ".cache", APP_DIR_NAME);
}

/**
 * The cursor-agent CLI's auth.json (§3.4): Linux $XDG_CONFIG_HOME/cursor/auth.json or ~/.config/cursor/auth.json;
 * Windows %APPDATA%\Cursor\auth.json; macOS ~/.cursor/auth.json (the file fallback next to the keychain).
 */
export function cursorCliAuthFile(p: PathEnvironment): string {
  if (p.platform === "win32") return win32.join(windowsAppData(p), "Cursor", "auth.json");
  if (p.platform === "darwin") return posix.join(p.homedir, ".cursor", "auth.json");
  return posix.join(xdgConfigHome(p), "cursor", "auth.json");
}

/**
 * The Cursor IDE's global state database (§3.4): macOS ~/Library/Application Support/Cursor/User/globalStorage/state.vscdb,
 * Linux ~/.config/Cursor/… (Electron honours $XDG_CONFIG_HOME), Windows %APPDATA%\Cursor\User\globalStorage\state.vscdb.
 */
export function cursorIdeStateDb(p: PathEnvironment): string {
  const tail = ["Cursor", "User", "globalStorage", "state.vscdb"];
  if (p.platform === "win32") return win32.join(windowsAppData(p), ...tail);
  if (p.platform === "darwin") return posix.join(p.homedir, "Library", "Application Support", ...tail);
  return posix.join(xdgConfigHome(p), ...tail);
}

/**
 * Folder of installed cursor-agent versions, one `<YYYY.MM.DD-sha>` directory each (§3.4, source of the
 * `x-cursor-client-version` string, §2.1). The Windows location is a guess: the installer is only documented for
 * Linux and macOS, where it is ~/.local/share/cursor-agent/versions.
 */
export function cursorAgentVersionsDir(p: PathEnvironment): string {
  if (p.platform === "win32") return win32.join(windowsLocalAppData(p), "cursor-agent", "versions");
  return posix.join(p.homedir, ".local", "share", "cursor-agent", "versions");
}
