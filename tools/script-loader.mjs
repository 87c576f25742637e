/**
 * Loads the bundle from its script versions (dist/script/, written by tools/script-chunks.mjs) with a V8 code cache:
 * what bin/cursor-bridge.js runs when they are there. Each script is compiled with `vm.Script` and the bytecode a
 * previous run left for it in dist/script/.cache/ (one file per script, named after the hash on its first line), so
 * V8 neither parses nor compiles what that run already had. A server (`cacheOnExit`) writes the caches it lacked, that
 * V8 rejected or that held markedly less than it compiled, when it exits, with every function it ran by then; each is
 * written to a temporary name and renamed. A cache is only ever a shortcut: one that is missing, unreadable, truncated or corrupt (a CRC-32 of its
 * bytes heads it), or that V8 rejects (another Node or V8 flags), is ignored and the script compiled from source; a
 * folder that cannot be written (an installed package) keeps none.
 *
 * The modules keep ES module semantics where the bundle relies on them: each is evaluated once, in the order its
 * imports name, strict, with live bindings (esbuild's getters) and `import.meta.url` its ES module's URL.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import vm from "node:vm";
import zlib from "node:zlib";

/** The first line of a script (tools/script-chunks.mjs writes it): this prefix, then the hex hash of the rest. */
export const SCRIPT_HEADER = "// cursor-bridge script ";
const CACHE_MAGIC = 0x43424331; // "CBC1"
/** bin/cursor-bridge.js's mark while the young generation is held (src/util/young-generation.ts), and the flag. */
export const HELD = Symbol.for("cursor-bridge.young-generation-held");
export const HELD_FLAG = "--semi-space-growth-factor=1";
const DEFAULT_FLAG = "--semi-space-growth-factor=2";
/** zlib.crc32 came with Node 20.15; without it no cache is read or written. */
const crc32 = typeof zlib.crc32 === "function" ? zlib.crc32 : undefined;

/** `[magic, CRC-32 of the payload, payload length]`, then the payload: V8 itself checks no checksum in release builds. */
export function encodeCache(payload) {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(CACHE_MAGIC, 0);
  head.writeUInt32LE(crc32(payload), 4);
  head.writeUInt32LE(payload.length, 8);
  return Buffer.concat([head, payload]);
}

/** The payload of a cache file, or undefined when it is not one or is damaged. */
export function decodeCache(bytes) {
  if (crc32 === undefined || bytes.length < 12 || bytes.readUInt32LE(0) !== CACHE_MAGIC) return undefined;
  const payload = bytes.subarray(12);
  if (payload.length !== bytes.readUInt32LE(8) || crc32(payload) !== bytes.readUInt32LE(4)) return undefined;
  return payload;
}

function readCache(file) {
  try {
    return decodeCache(readFileSync(file));
  } catch {
    return undefined;
  }
}

/**
 * The bundle's main module loaded from `<distDir>/script/`, or undefined when there are no scripts (a build without
 * them) or this Node cannot run them; `cacheOnExit`: write the missing or rejected caches when the process exits.
 */
export function loadScriptBundle(distDir, { cacheOnExit = false } = {}) {
  // import() of a package or file from a script needs Node's own loader (Node 20.12 and later).
  const dynamicImport = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (dynamicImport === undefined) return undefined;
  const scriptDir = join(distDir, "script");
  const cacheDir = join(scriptDir, ".cache");
  let mainText;
  try {
    mainText = readFileSync(join(scriptDir, "main.js"), "utf8");
  } catch {
    return undefined;
  }
  const nodeRequire = createRequire(join(distDir, "main.js"));
  const modules = new Map();
  /** Every script loaded, with the size of the cache V8 accepted for it (0: none). */
  const loaded = [];

  function load(file, preread) {
    const known = modules.get(file);
    if (known !== undefined) return known.exports;
    const text = preread ?? readFileSync(file, "utf8");
    const hash = text.startsWith(SCRIPT_HEADER) ? text.slice(SCRIPT_HEADER.length, text.indexOf("\n")) : "";
    const cacheFile = /^[0-9a-f]{16,64}$/.test(hash) ? join(cacheDir, `${hash}.bin`) : undefined;
    const cachedData = cacheFile === undefined ? undefined : readCache(cacheFile);
    const script = new vm.Script(text, {
      filename: file,
      cachedData,
      importModuleDynamically: dynamicImport,
    });
    if (cacheFile !== undefined) {
      const accepted = cachedData !== undefined && script.cachedDataRejected !== true;
      loaded.push({ script, cacheFile, held: globalThis[HELD], cachedBytes: accepted ? cachedData.length : 0 });
    }
    const module = { exports: {} };
    modules.set(file, module);
    // The ES module this script was made from: its URL is import.meta.url, and its folder resolves its imports.
    const esmFile = join(distDir, file.slice(scriptDir.length + 1));
    const here = dirname(file);
    const requireChunk = (specifier) =>
      specifier.startsWith("./") || specifier.startsWith("../")
        ? load(resolve(here, specifier))
        : nodeRequire(specifier);
    // import() of a chunk loads it on a later turn of the event loop, as Node's import() of a module does (it reads
    // the file meanwhile): what the caller answers first (serve's first /health, while it loads the protocol code
    // right after its API serves) is not held up by the load.
    const importChunk = (specifier) =>
      new Promise((done, fail) =>
        setImmediate(() => {
          try {
            done(requireChunk(specifier));
          } catch (error) {
            fail(error);
          }
        }),
      );
    try {
      script.runInThisContext()(module.exports, requireChunk, module, importChunk, pathToFileURL(esmFile).href);
    } catch (error) {
      // A script whose top level threw is not kept half run: the next load of it runs it again (as require does).
      modules.delete(file);
      throw error;
    }
    return module.exports;
  }

  if (cacheOnExit && crc32 !== undefined) process.once("exit", () => writeCaches(loaded, cacheDir));
  return load(join(scriptDir, "main.js"), mainText);
}

/** A cache is written again when this run compiled enough more of its script (a start that ran only part of it). */
const GROWTH_TO_REWRITE = 1.1;

/**
 * Writes each script's code cache (with the functions compiled so far) when it had none, V8 rejected it, or this run
 * compiled markedly more of the script than it held (the first start may not have answered a chat). V8 checks its
 * flags against the ones a cache was made under, so a script compiled while bin/ held the young generation
 * (src/util/young-generation.ts) gets its cache made under that flag, and one compiled after the release under the
 * default; a process bin/ never held (the user sized the young generation) keeps its flags as they are.
 */
function writeCaches(loaded, cacheDir) {
  const heldNow = globalThis[HELD];
  let made = false;
  for (const { script, cacheFile, held, cachedBytes } of loaded) {
    try {
      if (held !== undefined) setFlagsFromString(held === true ? HELD_FLAG : DEFAULT_FLAG);
      const data = script.createCachedData();
      if (cachedBytes > 0 && data.length <= cachedBytes * GROWTH_TO_REWRITE) continue;
      if (!made) mkdirSync(cacheDir, { recursive: true });
      made = true;
      const temporary = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(temporary, encodeCache(data));
      renameSync(temporary, cacheFile);
    } catch {
      // A cache is only a shortcut: a folder that cannot be written keeps none.
    }
  }
  if (heldNow !== undefined) setFlagsFromString(heldNow === true ? HELD_FLAG : DEFAULT_FLAG);
}
