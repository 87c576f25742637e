#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
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
  let midLine = false;
  try {
    await ensureFreshBuild((text) => {
      process.stderr.write(text);
      midLine = !text.endsWith("\n");
    });
  } catch (error) {
    // Never a stack trace for a build that could not run. A user who may not write the clone (it belongs to someone
    // else, or is read-only) runs the complete build already there, with a warning: it is a whole build the owner
    // made (the stamp is written last), what an installed package runs too, and refusing would stop every other user
    // of a shared clone until the owner rebuilds. A build that failed for another reason (an error in src/) is not
    // papered over with older code, and without any build there is nothing to run: both exit 1.
    const denied = ["EACCES", "EPERM", "EROFS"].includes(error?.code);
    const why = error instanceof Error ? error.message : String(error);
    const reason = staleReason() ?? "dist/ is out of date";
    const clone = fileURLToPath(new URL(".", import.meta.url)).replace(/[\\/]bin[\\/]$/, "");
    if (midLine) process.stderr.write("\n");
    if (!denied || !distBuilt()) {
      const fix = denied
        ? `this user cannot build it (${why}). Run \`npm run build\` in ${clone} as its owner`
        : `building it failed: ${why}`;
      process.stderr.write(`cursor-bridge: ${reason}, and ${fix}.\n`);
      process.exit(1);
    }
    process.stderr.write(
      `cursor-bridge: warning: ${reason}, but this user cannot rebuild it (${why}); running the previous build. ` +
        `Run \`npm run build\` in ${clone} as its owner.\n`,
    );
  }
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
