#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader, so the package needs no build step to run from a clone or from npm.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
