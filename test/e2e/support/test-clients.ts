/**
 * The real CLI clients the end-to-end tests drive (Claude Code, Codex) live in a test-only package,
 * `test/clients/package.json` with its own lockfile, so a user's `npm install` of cursor-bridge never downloads them
 * (about 900 MB). The first test that needs them installs them with the project's sub-package installer
 * (`node tools/sub-packages.mjs test/clients`: `npm ci --prefix test/clients` once, under a lock, across vitest's
 * worker processes). With `CI=true` a failed install fails the test; elsewhere the test skips with the
 * printed reason.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CLIENTS_DIR = fileURLToPath(new URL("../../clients/", import.meta.url));

/** OpenCode's pinned linux-x64 binary inside test/clients (an optional dependency: installed on linux-x64 only). */
export const OPENCODE_BINARY = join(CLIENTS_DIR, "node_modules", "opencode-linux-x64", "bin", "opencode");

/** Environment that keeps OpenCode offline and quiet: no models.dev fetch, update check, default plugins, sharing or LSP downloads. */
export const OPENCODE_OFFLINE_ENV = {
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
} as const;

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

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Runs the project's sub-package installer for test/clients; resolves to why it failed, or undefined. */
function installClients(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["tools/sub-packages.mjs", "test/clients"], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "pipe"],
    });
    let errors = "";
    child.stderr?.on("data", (part: Buffer) => (errors += part.toString()));
    child.once("error", (error) => resolve(`the installer could not be started: ${error.message}`));
    child.once("exit", (code, signal) =>
      resolve(
        code === 0 ? undefined : errors.trim() || `tools/sub-packages.mjs test/clients failed (${signal ?? code})`,
      ),
    );
  });
}

/**
 * Makes sure the pinned clients are installed. Resolves to undefined when ready, or to the reason they are not
 * (outside CI only: under `CI=true` a failed install rejects, so the test fails instead of skipping).
 */
export async function ensureTestClients(): Promise<string | undefined> {
  const reason = await installClients();
  if (reason !== undefined && process.env.CI === "true") throw new Error(reason);
  return reason;
}
