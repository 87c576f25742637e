#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { distBuilt, distDir, staleReason } from "../tools/build-stamp.mjs";
import { HELD, HELD_FLAG, loadScriptBundle } from "../tools/script-loader.mjs";

/**
 * Node's own modules a server's start loads (serve and the emulator alike), up to its first answer: loaded here,
 * before the young generation is held below. Node compiles each of its modules from the code cache built into it,
 * and V8 rejects that cache while any V8 flag differs from its default, as the held growth factor does: each of these
 * would then be compiled from source, about 27 ms more CPU for this list. test/cli/held-builtins.test.ts holds the
 * list complete.
 */
const SERVER_BUILTINS = [
  "perf_hooks",
  "module",
  "diagnostics_channel",
  "net",
  "os",
  "crypto",
  "fs/promises",
  "dgram",
  "child_process",
  "vm",
  "assert",
  "http",
  "https",
  "tls",
  "http2",
  "zlib",
  "dns",
  "cluster",
  "util/types",
  "worker_threads",
  // Parts that Node's modules load on first use, as the start uses them.
  "net#BlockList",
  "net#SocketAddress",
  "crypto#webcrypto",
  "util#parseArgs",
  "util#MIMEType",
];

const command = process.argv[2];
/** A long-running server (its start loads Node's server modules; it writes the scripts' code caches on exit). */
const server = command === "serve" || command === "emulator";
// Start-up allocations live as long as the process: keep the young generation small until a server listens
// (src/util/young-generation.ts releases it), unless the user sized it.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((option) => option.includes("semi-space"))) {
  if (server) {
    const require = createRequire(import.meta.url);
    for (const entry of SERVER_BUILTINS) {
      const [name, member] = entry.split("#");
      const builtin = require(`node:${name}`);
      if (member !== undefined) Reflect.get(builtin, member);
    }
    // Node's fetch classes (its bundled undici) load on first use of one of them, which Hono's server makes.
    Reflect.get(globalThis, "Response");
  }
  setFlagsFromString(HELD_FLAG);
  globalThis[HELD] = true;
}
let loaded;
if (!distBuilt() || staleReason() !== undefined) {
  const { ensureFreshBuild } = await import("../tools/build.mjs");
  await ensureFreshBuild((text) => process.stderr.write(text));
}
// The bundle as scripts with a code cache (tools/script-loader.mjs), unless the build made none or
// CURSOR_BRIDGE_SCRIPTS=0 asks for the ES modules (the same code, compiled from source at every start).
if (process.env.CURSOR_BRIDGE_SCRIPTS !== "0") {
  try {
    loaded = loadScriptBundle(distDir, { cacheOnExit: server });
  } catch (error) {
    process.stderr.write(`cursor-bridge: loading dist/script/ failed (${error?.message ?? error}); loading dist/\n`);
  }
}
loaded ??= await import("../dist/main.js");
process.exitCode = await loaded.main(process.argv.slice(2));
