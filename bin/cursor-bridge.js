#!/usr/bin/env node
// Runs the compiled CLI in dist/ (built by `npm install` through the `prepare` script). In a clone, dist/ is rebuilt
// first when src/ is newer (tools/build.mjs says so on stderr), so a start never runs stale output.
import { ensureFreshBuild } from "../tools/build.mjs";

await ensureFreshBuild((text) => process.stderr.write(text));
const { main } = await import("../dist/main.js");
process.exitCode = await main(process.argv.slice(2));
