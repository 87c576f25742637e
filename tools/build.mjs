#!/usr/bin/env node
/**
 * Builds dist/ from src/: one ESM bundle (dist/main.js, with what is loaded lazily, such as serve's runtime and the
 * emulator, as chunks) holding the npm packages too, because loading one file is much faster than resolving hundreds of small modules
 * (zod, protobuf-es, connect) at every start. js-tiktoken (22 MB of BPE ranks) stays external and loads on the
 * first count_tokens request. esbuild only transpiles; `npm run typecheck` checks types.
 *
 * `npm install` runs it (the `prepare` script), and bin/cursor-bridge.js calls {@link ensureFreshBuild} before every
 * start, so a clone never runs stale output: when any source under src/ (or this file) is newer than the last build,
 * dist/ is rebuilt first and stderr says so. An installed package without src/ runs its dist/ as shipped.
 * Usage: `node tools/build.mjs` (always builds; `--if-stale`: only when stale, as a start would).
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const srcDir = path.join(root, "src");
const distDir = path.join(root, "dist");
/** Written last by a successful build; its mtime is the moment the build read its sources. */
const stampFile = path.join(distDir, ".build-stamp");
const lockDir = path.join(root, ".dist-build-lock");
const LOCK_STALE_MS = 120_000;

/**
 * Newest mtime (ms) among the sources that go into dist/: src/ files and folders (deletions touch the folder). Every
 * start runs this, so it is kept to one readdir per folder and one stat per file (paths joined by hand: path.join
 * costs more than the stat).
 */
function newestSourceMtime() {
  let newest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  const walk = (dir) => {
    const own = statSync(dir).mtimeMs;
    if (own > newest) newest = own;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = `${dir}${path.sep}${entry.name}`;
      if (entry.isDirectory()) walk(full);
      else if (!entry.name.endsWith(".test.ts")) {
        const mtime = statSync(full).mtimeMs;
        if (mtime > newest) newest = mtime;
      }
    }
  };
  walk(srcDir);
  return newest;
}

/** Why dist/ must be (re)built, or undefined when it is current (or when there are no sources to build from). */
export function staleReason() {
  if (!existsSync(srcDir)) return undefined;
  if (!existsSync(stampFile) || !existsSync(path.join(distDir, "main.js"))) return "dist/ has not been built";
  return newestSourceMtime() > statSync(stampFile).mtimeMs ? "src/ changed since dist/ was built" : undefined;
}

/** Builds dist/ (each file written to a temporary name and renamed, so a concurrent reader never sees half a file). */
export async function build() {
  // The stamp's time: when the sources were read (or the newest source, should a clock put one in the future).
  const startedAt = new Date(Math.max(Date.now(), existsSync(srcDir) ? newestSourceMtime() : 0));
  const { build: esbuild } = await import("esbuild");
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { main: "src/cli/main.ts" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: ["esbuild", "js-tiktoken"],
    // Bundled CommonJS code may call require() for Node's own modules.
    banner: {
      js: 'import { createRequire as __bridgeRequire } from "node:module"; const require = __bridgeRequire(import.meta.url);',
    },
    outdir: distDir,
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "error",
    write: false,
  });
  const written = new Set(result.outputFiles.map((file) => file.path));
  for (const file of result.outputFiles) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
  // Chunks of earlier builds (their names carry a content hash) are no longer referenced.
  const chunksDir = path.join(distDir, "chunks");
  for (const name of existsSync(chunksDir) ? readdirSync(chunksDir) : []) {
    if (!written.has(path.join(chunksDir, name))) rmSync(path.join(chunksDir, name), { force: true });
  }
  writeFileSync(stampFile, `${startedAt.toISOString()}\n`);
  utimesSync(stampFile, startedAt, startedAt);
}

/** Rebuilds dist/ when it is stale (one process at a time; the others wait and then find it current). */
export async function ensureFreshBuild(log) {
  if (staleReason() === undefined) return;
  const { withDirLock } = await import("./dir-lock.mjs");
  await withDirLock(lockDir, { staleMs: LOCK_STALE_MS, pollMs: 100 }, async () => {
    const reason = staleReason();
    if (reason === undefined) return;
    const started = performance.now();
    log(`cursor-bridge: ${reason}; building it (node tools/build.mjs)...`);
    await build();
    log(` done in ${Math.round(performance.now() - started)} ms.\n`);
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  try {
    if (process.argv.includes("--if-stale")) await ensureFreshBuild((text) => process.stdout.write(text));
    else await build();
    if (!process.argv.includes("--if-stale")) {
      process.stdout.write(`Built dist/ from src/ in ${Math.round(performance.now() - started)} ms.\n`);
    }
  } catch (error) {
    process.stderr.write(`Building dist/ failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
