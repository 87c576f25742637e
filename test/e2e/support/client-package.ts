/**
 * The test-only real-client package (`test/clients`: Claude Code and Codex CLI pinned, with their own lockfile).
 * It is installed on first use with `npm ci --prefix test/clients`, never by a user's `npm install`. Concurrent test
 * files serialise on a lock directory. With `CI=true` a failed install fails the test run; elsewhere (e.g. offline)
 * the caller skips with the printed reason.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const CLIENTS_DIR = fileURLToPath(new URL("../../clients/", import.meta.url));
const LOCK_DIR = `${CLIENTS_DIR}.install-lock`;
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** Path of a client's executable inside the package. */
export function clientBinary(name: "codex" | "claude"): string {
  return `${CLIENTS_DIR}node_modules/.bin/${name}`;
}

function runNpmCi(): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("npm", ["ci", "--prefix", CLIENTS_DIR, "--no-audit", "--no-fund"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (part: string) => (output += part));
    child.stderr.setEncoding("utf8").on("data", (part: string) => (output += part));
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ code: 1, output: `${output}\n${String(error)}` });
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, output });
    });
  });
}

async function waitForLockRelease(): Promise<void> {
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  while (existsSync(LOCK_DIR) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
}

/**
 * Ensures `name` is installed. Resolves to undefined when it is ready, or to the reason it is not (outside CI).
 * @throws when the install fails and `CI=true`.
 */
export async function ensureClient(name: "codex" | "claude"): Promise<string | undefined> {
  if (existsSync(clientBinary(name))) return undefined;
  let owner = false;
  try {
    mkdirSync(LOCK_DIR);
    owner = true;
  } catch {
    await waitForLockRelease();
  }
  try {
    if (owner && !existsSync(clientBinary(name))) {
      const { code, output } = await runNpmCi();
      if (code !== 0) {
        const reason = `npm ci --prefix test/clients failed (exit ${code}): ${output.trim().slice(-1500)}`;
        if (process.env.CI === "true") throw new Error(reason);
        return reason;
      }
    }
  } finally {
    if (owner) rmSync(LOCK_DIR, { recursive: true, force: true });
  }
  if (existsSync(clientBinary(name))) return undefined;
  const reason = `${clientBinary(name)} is missing after installing test/clients`;
  if (process.env.CI === "true") throw new Error(reason);
  return reason;
}
