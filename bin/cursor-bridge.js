#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { setFlagsFromString } from "node:v8";
import { ensureFreshBuild } from "../tools/build.mjs";

// Start-up allocations live as long as the process: keep the young generation small until a server listens
// (src/util/young-generation.ts releases it), unless the user sized it.
if (![...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((option) => option.includes("semi-space"))) {
  setFlagsFromString("--semi-space-growth-factor=1");
  globalThis[Symbol.for("cursor-bridge.young-generation-held")] = true;
}
await ensureFreshBuild((text) => process.stderr.write(text));
const { main } = await import("../dist/main.js");
process.exitCode = await main(process.argv.slice(2));
