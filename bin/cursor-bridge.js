#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { distBuilt, staleReason } from "../tools/build-stamp.mjs";

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

// The bundle starts loading (its files are read off the main thread) while src/ is compared with the build; should
// dist/ be stale after all, what was loaded is set aside and the rebuilt bundle loaded instead.
const built = distBuilt() ? import("../dist/main.js") : undefined;
built?.catch(() => {});
// Start-up allocations live as long as the process: keep the young generation small until a server listens
// (src/util/young-generation.ts releases it), unless the user sized it.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((option) => option.includes("semi-space"))) {
  const command = process.argv[2];
  if (command === "serve" || command === "emulator") {
    const require = createRequire(import.meta.url);
    for (const entry of SERVER_BUILTINS) {
      const [name, member] = entry.split("#");
      const loaded = require(`node:${name}`);
      if (member !== undefined) Reflect.get(loaded, member);
    }
    // Node's fetch classes (its bundled undici) load on first use of one of them, which Hono's server makes.
    Reflect.get(globalThis, "Response");
  }
  setFlagsFromString("--semi-space-growth-factor=1");
  globalThis[Symbol.for("cursor-bridge.young-generation-held")] = true;
}
let loaded;
if (built === undefined || staleReason() !== undefined) {
  const { ensureFreshBuild } = await import("../tools/build.mjs");
  await ensureFreshBuild((text) => process.stderr.write(text));
  loaded = await import(`../dist/main.js?built=${Date.now()}`);
} else {
  loaded = await built;
}
process.exitCode = await loaded.main(process.argv.slice(2));
