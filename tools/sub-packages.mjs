#!/usr/bin/env node
/**
 * Test-only and tool-only packages that a plain `npm install` of cursor-bridge never downloads, installed on first
 * use by the commands that need them (`npm test`, vitest's global setup, `npm run generate`, `npm run check:gen`):
 *
 * - `test/`      the client SDKs the tests drive (openai, ai, @ai-sdk/openai-compatible, @anthropic-ai/sdk); tests
 *                import them by name and Node, vite and tsc all find them in test/node_modules.
 * - `tools/gen/` the protobuf generator (buf, 128 MB, and protoc-gen-es).
 *
 * (The real CLI clients in test/clients/ are installed by the end-to-end tests themselves: test/e2e/support.)
 *
 * Each one is a package.json plus lockfile; "installed" means every package its lockfile lists directly is present
 * at the locked version, otherwise `npm ci --prefix <dir>` runs once (under a lock shared by concurrent runs).
 * Usage: `node tools/sub-packages.mjs test tools/gen`. Progress goes to stdout, npm's output only on failure.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The version a package.json in `dir/node_modules/<name>` declares, or undefined when it is not installed. */
function installedVersion(dir, name) {
  const file = path.join(dir, "node_modules", name, "package.json");
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")).version;
}

/** True when every direct dependency in `dir`'s lockfile is installed at its locked version. */
export function isInstalled(dir) {
  const lock = JSON.parse(readFileSync(path.join(dir, "package-lock.json"), "utf8"));
  const direct = Object.keys(lock.packages?.[""]?.dependencies ?? {});
  return direct.every((name) => installedVersion(dir, name) === lock.packages[`node_modules/${name}`]?.version);
}

function npmCi(dir) {
  return new Promise((resolve) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const child = spawn(npm, ["ci", "--prefix", dir, "--no-audit", "--no-fund"], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (part) => {
      output = (output + part.toString()).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve(`npm could not be started: ${error.message}`);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(
        code === 0 ? undefined : `npm ci --prefix ${path.relative(root, dir)} failed (${signal ?? code}):\n${output}`,
      );
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `work` holding `dir/.install-lock` (mkdir is atomic); breaks a lock left behind by a killed run. */
async function withLock(dir, work) {
  const lockDir = path.join(dir, ".install-lock");
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if (error?.code !== "EEXIST") throw error;
      const age = existsSync(lockDir) ? Date.now() - statSync(lockDir).mtimeMs : 0;
      if (age > INSTALL_TIMEOUT_MS + 60_000) rmSync(lockDir, { recursive: true, force: true });
      await sleep(300);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/** Installs the sub-package in `relativeDir` (relative to the repo root) unless it is current; throws on failure. */
export async function ensureInstalled(relativeDir, log = (line) => process.stdout.write(`${line}\n`)) {
  const dir = path.join(root, relativeDir);
  if (isInstalled(dir)) return;
  await withLock(dir, async () => {
    if (isInstalled(dir)) return;
    const { description = "" } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    log(`Installing ${relativeDir}/ on first use (npm ci --prefix ${relativeDir}): ${description.split(". ")[0]}.`);
    const failure = await npmCi(dir);
    if (failure !== undefined) throw new Error(failure);
    if (!isInstalled(dir)) throw new Error(`npm ci --prefix ${relativeDir} finished but its packages are missing`);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    for (const dir of process.argv.slice(2)) await ensureInstalled(dir);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
