#!/usr/bin/env node
/**
 * Builds dist/ from src/: one ESM bundle (dist/main.js, with what is loaded lazily, such as serve's runtime and the
 * emulator, as chunks) holding the npm packages too, because loading one file is much faster than resolving hundreds of small modules
 * (zod, protobuf-es, connect) at every start; the small shared chunks a start loads anyway are merged into one file
 * (tools/merge-chunks.mjs), and every file is also written as a script (dist/script/, tools/script-chunks.mjs) that
 * bin/ runs with a V8 code cache. The generated protobuf descriptors are precompiled to JSON
 * (tools/precompiled-descriptors.mjs). Of js-tiktoken's 22 MB of BPE ranks, the one vocabulary count_tokens
 * uses (o200k_base) is written to dist/o200k_base.tokens (tools/token-ranks.mjs). esbuild only transpiles;
 * `npm run typecheck` checks types.
 *
 * `npm install` runs it (the `prepare` script), and bin/cursor-bridge.js asks tools/build-stamp.mjs before every
 * start whether dist/ is current and calls {@link ensureFreshBuild} when it is not, so a clone never runs stale
 * output: when any source under src/ (or this file) is newer than the last build, dist/ is rebuilt first and stderr
 * says so. An installed package without src/ runs its dist/ as shipped.
 * Usage: `node tools/build.mjs` (always builds; `--if-stale`: only when stale, as a start would).
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { distDir, newestSourceMtime, srcDir, staleReason, stampFile } from "./build-stamp.mjs";
import { mergeSmallChunks } from "./merge-chunks.mjs";
import { ESM_BANNER, scriptVersions } from "./script-chunks.mjs";
import { encodeTokenRanks } from "./token-ranks.mjs";

export { staleReason };

const root = fileURLToPath(new URL("..", import.meta.url));
const lockDir = path.join(root, ".dist-build-lock");
const LOCK_STALE_MS = 120_000;

/**
 * zod's `locales` namespace holds its error messages in 60-odd languages (about 400 KB of the bundle, kept in memory as
 * source by every process); cursor-bridge never switches from English (zod's default, which zod imports itself). In
 * dist/, `z.locales` holds English only.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: args.importer, namespace: "zod-english-only" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * prom-client (the /metrics registry) imports `@opentelemetry/api` for one thing: exemplar labels from the active
 * span, and only when a metric is created with `enableExemplars` (cursor-bridge never does). With no OpenTelemetry
 * SDK registered, as in cursor-bridge, the API finds no span: `trace.getSpan(context.active())` is undefined. In
 * dist/, prom-client gets exactly that answer from a module of a few lines instead of the API's 51 modules (65 KB
 * to parse and evaluate; every start paid it until prom-client moved to the first scrape, which pays it now).
 */
const noOpenTelemetrySdk = {
  name: "no-opentelemetry-sdk",
  setup(build) {
    build.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) =>
      args.importer.includes(`${path.sep}prom-client${path.sep}`)
        ? { path: "@opentelemetry/api", namespace: "no-opentelemetry-sdk" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "no-opentelemetry-sdk" }, () => ({
      contents:
        "export const context = { active: () => undefined };\nexport const trace = { getSpan: () => undefined };\n",
      loader: "js",
    }));
  },
};

/** The build's own tools, a sub-package for installs without dev dependencies (tools/build/package.json). */
const toolsDir = path.join(root, "tools", "build");

/** Imports esbuild and js-tiktoken's o200k_base ranks as installed in `dir` (its node_modules). */
async function importTools(dir) {
  const require = createRequire(path.join(dir, "package.json"));
  const load = (name) => import(pathToFileURL(require.resolve(name)).href);
  const [esbuild, ranks] = await Promise.all([load("esbuild"), load("js-tiktoken/ranks/o200k_base")]);
  // Both resolve to CommonJS files (require conditions), whose exports arrive as the default export.
  const vocabulary = ranks.default?.bpe_ranks === undefined ? ranks.default?.default : ranks.default;
  return {
    esbuild: esbuild.build ?? esbuild.default.build,
    transform: esbuild.transformSync ?? esbuild.default.transformSync,
    ranks: vocabulary,
  };
}

/**
 * Runs `work` with esbuild and the o200k_base ranks. A clone with its dev dependencies (`npm install`, `npm ci`) has
 * them in node_modules. One installed with `npm install --omit=dev` has not (they are 33 MB, and only a build needs
 * them): then tools/build/ is installed (`npm ci --prefix tools/build`, from npm's cache when it has them), used for
 * this build and removed again, so such an install stays small and only a rebuild (src/ changed) pays for it.
 */
async function withBuildTools(work) {
  let tools;
  try {
    tools = await importTools(root);
  } catch (error) {
    if (error?.code !== "MODULE_NOT_FOUND" && error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  }
  if (tools !== undefined) return work(tools);
  const { ensureInstalled } = await import("./sub-packages.mjs");
  await ensureInstalled("tools/build", (line) => process.stderr.write(`\n${line}\n`));
  try {
    return await work(await importTools(toolsDir));
  } finally {
    rmSync(path.join(toolsDir, "node_modules"), { recursive: true, force: true });
  }
}

/** Builds dist/ (each file written to a temporary name and renamed, so a concurrent reader never sees half a file). */
export async function build() {
  await withBuildTools(buildWith);
}

async function buildWith({ esbuild, transform, ranks }) {
  // Imported here, not at the top: it needs the installed @bufbuild/protobuf, and a script that fails to load says
  // nothing of why (`npm install -g .` in a fresh clone runs this with nothing installed; see the hint below).
  const { precompiledDescriptors } = await import("./precompiled-descriptors.mjs");
  // The stamp's time: when the sources were read (or the newest source, should a clock put one in the future).
  const startedAt = new Date(Math.max(Date.now(), existsSync(srcDir) ? newestSourceMtime() : 0));
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { main: "src/cli/main.ts" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    external: ["esbuild"],
    // Bundled CommonJS code may call require() for Node's own modules.
    banner: { js: ESM_BANNER },
    outdir: distDir,
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: "linked",
    legalComments: "none",
    logLevel: "error",
    write: false,
    metafile: true,
    plugins: [zodEnglishOnly, noOpenTelemetrySdk, precompiledDescriptors],
  });
  const modules = await mergeSmallChunks({
    esbuild,
    outputFiles: result.outputFiles,
    metafile: result.metafile,
    root,
    distDir,
  });
  const outputFiles = [
    ...modules,
    ...scriptVersions({ transform, outputFiles: modules, distDir }),
    { path: path.join(distDir, "o200k_base.tokens"), contents: encodeTokenRanks(ranks) },
  ];
  for (const file of outputFiles) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.path.endsWith(".js") ? latin1Comments(file.text) : file.contents);
    renameSync(temporary, file.path);
  }
  pruneEarlierBuilds(
    distDir,
    outputFiles.map((file) => file.path),
  );
  // The code caches of earlier scripts (tools/script-loader.mjs names each after its script's hash; a missing one
  // only costs a compile).
  rmSync(path.join(distDir, "script", ".cache"), { recursive: true, force: true });
  writeFileSync(stampFile, `${startedAt.toISOString()}\n`);
  utimesSync(stampFile, startedAt, startedAt);
}

/** The list of the files of the last two builds in the folders {@link pruneEarlierBuilds} prunes. */
const BUILDS_FILE = ".builds.json";

/**
 * Removes the files of the builds before the previous one from dist/'s chunk and script folders. Chunk names carry a
 * content hash, so a build leaves the earlier ones unreferenced; but a server started before this build has not
 * loaded every chunk yet (a door loads its handlers on its first request, serve its runtime after the first
 * `/health`), and its main.js names the chunks of its own build. So the previous build's files stay, listed in
 * dist/.builds.json with this build's: a server keeps working across one rebuild of its clone; one started two
 * rebuilds ago answers 503 `server_updated` (restart it). Without a list (dist/ of an older build script), every file
 * found counts as the previous build's.
 */
export function pruneEarlierBuilds(dist, writtenPaths) {
  const scriptDir = path.join(dist, "script");
  const dirs = [path.join(dist, "chunks"), path.join(scriptDir, "chunks"), scriptDir];
  const relative = (file) => path.relative(dist, file).split(path.sep).join("/");
  const found = dirs.flatMap((dir) =>
    existsSync(dir)
      ? readdirSync(dir, { withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => relative(path.join(dir, entry.name)))
      : [],
  );
  const inDirs = new Set(dirs.map((dir) => relative(dir)));
  const current = writtenPaths.map(relative).filter((file) => inDirs.has(path.posix.dirname(file)));
  let previous;
  try {
    const list = JSON.parse(readFileSync(path.join(dist, BUILDS_FILE), "utf8")).builds?.at(-1);
    previous = Array.isArray(list) ? list.filter((file) => typeof file === "string") : undefined;
  } catch {
    previous = undefined;
  }
  previous ??= found;
  const keep = new Set([...current, ...previous]);
  for (const file of found) if (!keep.has(file)) rmSync(path.join(dist, file), { force: true });
  // The list names what the next build keeps (the last entry); the entry before it is what this one kept.
  const temporary = path.join(dist, `${BUILDS_FILE}.${process.pid}.tmp`);
  writeFileSync(temporary, `${JSON.stringify({ builds: [previous, current] })}\n`);
  renameSync(temporary, path.join(dist, BUILDS_FILE));
}

/**
 * The script with every character above U+00FF in its comments replaced by `?` (one per UTF-16 unit, so source-map
 * columns hold). V8 keeps each loaded script's source in memory, two bytes a character as soon as one character needs
 * it: esbuild escapes strings to ASCII but keeps some comments as written (an em dash in a doc comment), which doubled
 * the 2.3 MB the bundle's sources hold. Code is never touched: esbuild emits a kept comment on lines of its own, and
 * only those (a line starting with `//`, or the lines of a block comment opened at the start of a line) are
 * rewritten; a wide character anywhere else (a regex or `String.raw` literal) stays, and the script is two-byte.
 */
export function latin1Comments(text) {
  const wide = /[\u0100-\uffff]/g;
  if (!/[\u0100-\uffff]/.test(text)) return text;
  let inBlock = false;
  return text
    .split("\n")
    .map((line) => {
      const start = line.length - line.trimStart().length;
      if (!inBlock && line.startsWith("//", start)) return line.replace(wide, "?");
      if (!inBlock && !line.startsWith("/*", start)) return line;
      // Inside a block comment: rewrite up to its end (when it ends on this line), leave what follows as it is.
      const end = line.indexOf("*/", inBlock ? 0 : start + 2);
      inBlock = end === -1;
      const cut = inBlock ? line.length : end + 2;
      return line.slice(0, cut).replace(wide, "?") + line.slice(cut);
    })
    .join("\n");
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
    if (!existsSync(path.join(root, "node_modules"))) {
      // `npm install -g .` in a fresh clone links the folder and runs this script without installing anything.
      process.stderr.write(
        "The dependencies are not installed in this folder. Run `npm install` here first; to put cursor-bridge on " +
          "your PATH from a clone, run `npm install && npm link`.\n",
      );
    }
    process.exitCode = 1;
  }
}
