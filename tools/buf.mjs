#!/usr/bin/env node
/**
 * Runs buf from the tool-only package tools/gen/ (installed on first use, see tools/sub-packages.mjs), with
 * tools/gen/node_modules/.bin first on PATH so buf.gen.yaml's local `protoc-gen-es` plugin is found offline.
 * `npm run generate` is `node tools/buf.mjs generate`; tools/check-gen.mjs uses runBuf().
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureInstalled } from "./sub-packages.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const binDir = path.join(root, "tools", "gen", "node_modules", ".bin");

/** Installs tools/gen if needed, then runs `buf <args>` in the repo root; returns spawnSync's result. */
export async function runBuf(args, stdio = "pipe") {
  await ensureInstalled("tools/gen");
  return spawnSync(path.join(binDir, "buf"), args, {
    cwd: root,
    encoding: "utf8",
    stdio,
    env: { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ""}` },
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runBuf(process.argv.slice(2), "inherit");
  if (result.error) process.stderr.write(`buf could not be started: ${result.error.message}\n`);
  process.exitCode = result.status ?? 1;
}
