#!/usr/bin/env node
/**
 * Test-only and tool-only packages that a plain `npm install` of cursor-bridge never downloads, installed on first
 * use by the commands that need them (`npm test`, vitest's global setup, `npm run generate`, `npm run check:gen`):
 *
 * - `test/`      the client SDKs the tests drive (openai, ai, @ai-sdk/openai-compatible, @anthropic-ai/sdk); tests
 *                import them by name and Node, vite and tsc all find them in test/node_modules.
 * - `tools/gen/` the protobuf generator (buf, 128 MB, and protoc-gen-es).
 * - `tools/build/` esbuild and js-tiktoken, for building dist/ in an install without dev dependencies
 *                (`npm install --omit=dev`): tools/build.mjs installs it, builds and removes it again.
 *
 * - `test/clients/` the real CLI clients (Claude Code, Codex, OpenCode's binary; about 900 MB), installed by the
 *                end-to-end tests themselves when they first need them (test/e2e/support/test-clients.ts).
 *
 * Each one is a package.json plus lockfile; "installed" means every package its lockfile lists directly is present
 * at the locked version, otherwise `npm ci --prefix <dir>` runs once (under a lock shared by concurrent runs).
 * Usage: `node tools/sub-packages.mjs test tools/gen`. Progress goes to stdout, npm's output only on failure.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { withDirLock } from "./dir-lock.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
/** The real CLI clients in test/clients are about 900 MB. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/** The version a package.json in `dir/node_modules/<name>` declares, or undefined when it is not installed. */
function installedVersion(dir, name) {
  const file = path.join(dir, "node_modules", name, "package.json");
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")).version;
}

/** Whether npm installs a locked package on this machine (its `os`/`cpu` lists, `!` negating). */
function fitsThisMachine(entry) {
  const fits = (list, value) =>
    list === undefined ||
    (!list.includes(`!${value}`) && (list.every((item) => item.startsWith("!")) || list.includes(value)));
  return fits(entry?.os, process.platform) && fits(entry?.cpu, process.arch);
}

/**
 * True when every direct dependency in `dir`'s lockfile is installed at its locked version (optional ones only where
 * npm installs them: OpenCode's linux-x64 binary in test/clients, say).
 */
export function isInstalled(dir) {
  const lock = JSON.parse(readFileSync(path.join(dir, "package-lock.json"), "utf8"));
  const top = lock.packages?.[""] ?? {};
  const entry = (name) => lock.packages[`node_modules/${name}`];
  const optional = Object.keys(top.optionalDependencies ?? {}).filter((name) => fitsThisMachine(entry(name)));
  const direct = [...Object.keys(top.dependencies ?? {}), ...optional];
  return direct.every((name) => installedVersion(dir, name) === entry(name)?.version);
}

function npmCi(dir) {
  return new Promise((resolve) => {
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    // Under `npm install -g .` npm's own settings say "global", which `npm ci` refuses (ECIGLOBAL): this install is
    // always the sub-package's local one.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^npm_config_(global|location|prefix)$/i.test(name)),
    );
    const child = spawn(npm, ["ci", "--prefix", dir, "--no-audit", "--no-fund"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
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

/** Installs the sub-package in `relativeDir` (relative to the repo root) unless it is current; throws on failure. */
export async function ensureInstalled(relativeDir, log = (line) => process.stdout.write(`${line}\n`)) {
  const dir = path.join(root, relativeDir);
  if (isInstalled(dir)) return;
  await withDirLock(
    path.join(dir, ".install-lock"),
    { staleMs: INSTALL_TIMEOUT_MS + 60_000, pollMs: 300 },
    async () => {
      if (isInstalled(dir)) return;
      const { description = "" } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
      log(`Installing ${relativeDir}/ on first use (npm ci --prefix ${relativeDir}): ${description.split(". ")[0]}.`);
      const failure = await npmCi(dir);
      if (failure !== undefined) throw new Error(failure);
      if (!isInstalled(dir)) throw new Error(`npm ci --prefix ${relativeDir} finished but its packages are missing`);
    },
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    for (const dir of process.argv.slice(2)) await ensureInstalled(dir);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
