#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { setFlagsFromString } from "node:v8";
import { distBuilt, staleReason } from "../tools/build-stamp.mjs";

// Start-up allocations live as long as the process: keep the young generation small until a server listens
// (src/util/young-generation.ts releases it), unless the user sized it.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((option) => option.includes("semi-space"))) {
  setFlagsFromString("--semi-space-growth-factor=1");
  globalThis[Symbol.for("cursor-bridge.young-generation-held")] = true;
}
// The bundle starts loading (its files are read off the main thread) while src/ is compared with the build; should
// dist/ be stale after all, what was loaded is set aside and the rebuilt bundle loaded instead.
const built = distBuilt() ? import("../dist/main.js") : undefined;
built?.catch(() => {});
let loaded;
if (built === undefined || staleReason() !== undefined) {
  const { ensureFreshBuild } = await import("../tools/build.mjs");
  await ensureFreshBuild((text) => process.stderr.write(text));
  loaded = await import(`../dist/main.js?built=${Date.now()}`);
} else {
  loaded = await built;
}
process.exitCode = await loaded.main(process.argv.slice(2));
