/**
 * Where a running `serve` listens: it writes `<dataDir>/serve.json` (mode 0600) once it listens and removes it when
 * it exits, so `setup` and `doctor` find the server without being told its port. A record is believed only while its
 * process is alive and a cursor-bridge answers `/health` at its address; anything else is stale and ignored.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../stores/file/atomic-write.js";
import { makeDirSync } from "../util/make-dir.js";

/** What `serve.json` holds. */
export interface RuntimeRecord {
  pid: number;
  host: string;
  port: number;
  /** `http://127.0.0.1:8765` (no path). */
  url: string;
  version: string;
  startedAt: string;
}

/** The runtime file of a data directory. */
export function runtimeFilePath(dataDir: string): string {
  return join(dataDir, "serve.json");
}

/**
 * Writes the record for this process; returns the function that removes it again (only while it is still ours: a
 * later `serve` on the same data directory may have replaced it). The removal also runs when the process exits.
 */
export function writeRuntimeFile(dataDir: string, record: RuntimeRecord): () => void {
  const path = runtimeFilePath(dataDir);
  try {
    makeDirSync(dataDir);
    // Atomically, so a reader (setup, doctor) never sees it half written.
    writeFileAtomicSync(path, `${JSON.stringify(record)}\n`);
  } catch {
    // Only a convenience for setup and doctor: a read-only data directory must not stop the server.
    return () => {};
  }
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off("exit", remove);
    if (readRuntimeFile(dataDir)?.pid === record.pid) rmSync(path, { force: true });
  };
  process.once("exit", remove);
  return remove;
}

/** The record as stored, or undefined when there is none or it is unreadable. */
export function readRuntimeFile(dataDir: string): RuntimeRecord | undefined {
  try {
    const value = JSON.parse(readFileSync(runtimeFilePath(dataDir), "utf8")) as Partial<RuntimeRecord>;
    const valid =
      typeof value.pid === "number" &&
      typeof value.host === "string" &&
      typeof value.port === "number" &&
      typeof value.url === "string";
    return valid ? (value as RuntimeRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (EPERM: it does, but it is another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether process `pid` of this machine runs cursor-bridge, told by its command line (`node …/bin/cursor-bridge.js
 * serve`, a global install's `cursor-bridge`): read from /proc where there is one, else from `ps`. Undefined when it
 * cannot be told (the process is not visible to this user, or neither is available); false for a process that is
 * gone.
 */
export function runsCursorBridge(pid: number): boolean | undefined {
  let commandLine: string;
  if (existsSync("/proc/self/cmdline")) {
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      return processAlive(pid) ? undefined : false;
    }
  } else {
    try {
      commandLine = execFileSync("ps", ["-o", "command=", "-p", String(pid)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        timeout: 5_000,
      });
    } catch {
      // `ps -p` exits 1 when no such process runs.
      return processAlive(pid) ? undefined : false;
    }
  }
  return commandLine.includes("cursor-bridge");
}

/** The loopback URL that reaches a server bound to `host` (a wildcard bind is reached on this machine's loopback). */
export function reachableOrigin(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, "");
  const name = ["0.0.0.0", "", "::"].includes(bare) ? (bare === "::" ? "::1" : "127.0.0.1") : bare;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}

/** The cursor-bridge version answering `/health` on host:port, or undefined when something else (or nothing) is there. */
export async function servingBridgeVersion(host: string, port: number, timeoutMs = 2_000): Promise<string | undefined> {
  try {
    const response = await fetch(`${reachableOrigin(host, port)}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.json()) as { version?: unknown; upstream?: unknown };
    const ours =
      (response.ok || response.status === 503) &&
      typeof body.version === "string" &&
      ["cursor", "emulator"].includes(String(body.upstream));
    return ours ? String(body.version) : undefined;
  } catch {
    return undefined;
  }
}

/** The record of a cursor-bridge serving right now from this data directory, or undefined (none, or stale). */
export async function findRunningServer(dataDir: string): Promise<RuntimeRecord | undefined> {
  const record = readRuntimeFile(dataDir);
  if (record === undefined || !processAlive(record.pid)) return undefined;
  return (await servingBridgeVersion(record.host, record.port)) === undefined ? undefined : record;
}

/** The port `serve` listens on when nothing sets one. */
export const DEFAULT_PORT = 8765;

/**
 * True when the command line, the environment or the config file names the port (then the runtime file is not
 * consulted); a configured port other than the default can only have come from one of them.
 */
export function portGiven(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  configuredPort: number,
): boolean {
  const fromEnv = env.CURSOR_BRIDGE_PORT !== undefined && env.CURSOR_BRIDGE_PORT !== "";
  return flags.port !== undefined || fromEnv || configuredPort !== DEFAULT_PORT;
}
