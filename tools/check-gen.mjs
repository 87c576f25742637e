#!/usr/bin/env node
/**
 * Verifies that the committed src/gen/ is exactly what `buf generate` produces from proto/ today.
 *
 * Regenerates into a temporary directory with the repo's own buf.gen.yaml and compares every file byte for byte
 * (missing, extra and changed files all count). Exit 0 when identical, 1 when not (with the differing files named),
 * 2 when generation itself failed. Runs offline: buf and the local protoc-gen-es plugin come from the tool-only
 * package tools/gen/, which tools/buf.mjs installs on first use.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runBuf } from "./buf.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const genDir = path.join(root, "src", "gen");

/** Lists every file below `dir` as a sorted list of slash-separated relative paths ([] when `dir` is absent). */
function listFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch (error) {
    if (error && error.code === "ENOENT") return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}

/** Regenerates into a fresh temp dir and returns that dir's src/gen path; exits 2 if buf fails. */
async function regenerate(outBase) {
  let result;
  try {
    result = await runBuf(["generate", "--output", outBase]);
  } catch (error) {
    result = { error };
  }
  if (result.error || result.status !== 0) {
    process.stderr.write(`check-gen: buf generate failed (exit ${result.status ?? "none"}).\n`);
    process.stderr.write(`${result.error?.message ?? ""}${result.stderr ?? ""}\n`);
    process.exit(2);
  }
  return path.join(outBase, "src", "gen");
}

/** Compares two trees; returns human-readable difference lines (empty when identical). */
function compareTrees(committedDir, freshDir) {
  const committed = new Set(listFiles(committedDir));
  const fresh = new Set(listFiles(freshDir));
  const differences = [];
  for (const file of fresh) {
    if (!committed.has(file)) {
      differences.push(`missing in src/gen: ${file}`);
    } else if (!readFileSync(path.join(committedDir, file)).equals(readFileSync(path.join(freshDir, file)))) {
      differences.push(`differs: src/gen/${file}`);
    }
  }
  for (const file of committed) {
    if (!fresh.has(file)) differences.push(`not generated any more (stale): src/gen/${file}`);
  }
  return differences;
}

const outBase = mkdtempSync(path.join(tmpdir(), "cursor-bridge-gen-"));
try {
  const differences = compareTrees(genDir, await regenerate(outBase));
  if (differences.length > 0) {
    process.stderr.write(`check-gen: src/gen is out of date with proto/ (${differences.length} file(s)):\n`);
    for (const line of differences) process.stderr.write(`  ${line}\n`);
    process.stderr.write("Run `npm run generate` and commit src/gen. Never edit src/gen by hand.\n");
    process.exitCode = 1;
  } else {
    process.stdout.write(`check-gen: src/gen matches proto/ (${listFiles(genDir).length} files).\n`);
  }
} finally {
  rmSync(outBase, { recursive: true, force: true });
}
