/**
 * The real CLI clients the end-to-end tests drive (Claude Code, Codex) live in a test-only package,
 * `test/clients/package.json` with its own lockfile, so a user's `npm install` of cursor-bridge never downloads them
 * (about 770 MB). The first test that needs them runs `npm ci --prefix test/clients` (once, under a lock, across
 * vitest's worker processes). With `CI=true` a failed install fails the test; elsewhere the test skips with the
 * printed reason.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CLIENTS_DIR = fileURLToPath(new URL("../../clients/", import.meta.url));
const LOCK_DIR = join(CLIENTS_DIR, ".install-lock");
const INSTALL_TIMEOUT_MS = 15 * 60_000;
const STALE_LOCK_MS = INSTALL_TIMEOUT_MS + 60_000;

/** OpenCode's pinned linux-x64 binary inside test/clients (an optional dependency: installed on linux-x64 only). */
export const OPENCODE_BINARY = join(CLIENTS_DIR, "node_modules", "opencode-linux-x64", "bin", "opencode");

/** Why the OpenCode tests cannot run here (wrong platform, failed install), or undefined when they can. */
export async function openCodeSkipReason(): Promise<string | undefined> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return `OpenCode's pinned binary is linux-x64 only (this is ${process.platform}-${process.arch})`;
  }
  const installFailure = await ensureTestClients();
  if (installFailure !== undefined) return installFailure;
  if (!existsSync(OPENCODE_BINARY)) return `${OPENCODE_BINARY} is missing after installing test/clients`;
  return undefined;
}

/** Path of a client's executable inside test/clients. */
export function clientBin(name: "claude" | "codex"): string {
  return join(CLIENTS_DIR, "node_modules", ".bin", name);
}

/** True when every pinned dependency is installed at its pinned version. */
function installed(): boolean {
  const manifest = JSON.parse(readFileSync(join(CLIENTS_DIR, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  // The optional dependency is OpenCode's linux-x64 binary: npm installs it only on that platform.
  const linuxX64 = process.platform === "linux" && process.arch === "x64";
  const pinned = { ...manifest.dependencies, ...(linuxX64 ? manifest.optionalDependencies : {}) };
  return Object.entries(pinned).every(([name, version]) => {
    const file = join(CLIENTS_DIR, "node_modules", name, "package.json");
    return existsSync(file) && (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version === version;
  });
}

function runNpmCi(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const child = spawn(npm, ["ci", "--prefix", CLIENTS_DIR, "--no-audit", "--no-fund"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (part: Buffer) => (output += part.toString()));
    child.stderr?.on("data", (part: Buffer) => (output += part.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve(`npm could not be started: ${error.message}`);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(
        code === 0 ? undefined : `npm ci --prefix test/clients failed (${signal ?? code}):\n${output.slice(-2000)}`,
      );
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Takes the install lock (a directory: mkdir is atomic), breaking one left behind by a killed run. */
async function withLock<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + STALE_LOCK_MS;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      break;
    } catch {
      const age = existsSync(LOCK_DIR) ? Date.now() - statSync(LOCK_DIR).mtimeMs : 0;
      if (age > STALE_LOCK_MS || Date.now() > deadline) rmSync(LOCK_DIR, { recursive: true, force: true });
      await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

/**
 * Makes sure the pinned clients are installed. Resolves to undefined when ready, or to the reason they are not
 * (outside CI only: under `CI=true` a failed install rejects, so the test fails instead of skipping).
 */
export async function ensureTestClients(): Promise<string | undefined> {
  if (installed()) return undefined;
  const failure = await withLock(async () => (installed() ? undefined : runNpmCi()));
  const reason = failure ?? (installed() ? undefined : "npm ci finished but the pinned clients are not installed");
  if (reason !== undefined && process.env.CI === "true") throw new Error(reason);
  return reason;
}
