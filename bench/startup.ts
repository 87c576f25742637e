/**
 * Scenario: start time. `npm start` (and `node bin/cursor-bridge.js serve` without npm) from spawn to the
 * "listening on" line, median of N runs, each in a throwaway HOME (so it serves the embedded emulator), next to the
 * time of `node -e 0` on the same machine. The tracked ratio is start ÷ `node -e` (machine speed cancels out); the
 * absolute target is a 400 ms median for `npm start`. The first, unmeasured run builds dist/ if it is stale.
 * Standalone: `npx tsx bench/startup.ts [runs] [checkout]` (another checkout, e.g. to measure a baseline).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, type Table, type TargetResult } from "./report.js";

let ROOT = fileURLToPath(new URL("..", import.meta.url));
export const STARTUP_TARGET = { npmStartMedianMs: 400 };

/** Median start times (ms) and their ratio to a bare `node -e 0`. */
export interface StartupResult {
  runs: number;
  nodeMs: number;
  binMs: number;
  npmStartMs: number;
  binRatio: number;
  npmStartRatio: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** Spawns `command`, resolves to the ms until stdout matches `until` (or until exit when absent), then stops it. */
function timeSpawn(command: string, args: string[], until: RegExp | undefined): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-startup-"));
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") };
  const started = performance.now();
  // Its own process group, so stopping it also stops the node that npm starts.
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (part: Buffer) => (stderr += part.toString()));
  return new Promise<number>((resolve, reject) => {
    let out = "";
    let elapsed: number | undefined;
    child.stdout.on("data", (part: Buffer) => {
      out += part.toString();
      if (elapsed === undefined && until?.test(out)) {
        elapsed = performance.now() - started;
        if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      rmSync(home, { recursive: true, force: true });
      if (until === undefined && code === 0) resolve(performance.now() - started);
      else if (elapsed !== undefined) resolve(elapsed);
      else reject(new Error(`${command} ${args.join(" ")} exited (${code}) before listening:\n${stderr}`));
    });
  });
}

async function medianOf(runs: number, once: () => Promise<number>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return median(samples);
}

/** Measures `runs` starts of each kind (after one unmeasured warm-up start that also rebuilds a stale dist/). */
export async function runStartup(runs: number): Promise<StartupResult> {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const listening = /listening on /;
  const bin = () => timeSpawn(process.execPath, ["bin/cursor-bridge.js", "serve", "--port", "0"], listening);
  const npmStart = () => timeSpawn(npm, ["start", "--silent", "--", "--port", "0"], listening);
  await bin();
  const nodeMs = await medianOf(runs, () => timeSpawn(process.execPath, ["-e", "0"], undefined));
  const binMs = await medianOf(runs, bin);
  const npmStartMs = await medianOf(runs, npmStart);
  return { runs, nodeMs, binMs, npmStartMs, binRatio: binMs / nodeMs, npmStartRatio: npmStartMs / nodeMs };
}

/** The scenario's table and its target. */
export function startupReport(r: StartupResult): { table: Table; targets: TargetResult[] } {
  const table: Table = {
    title: `Start time to the listening line (median of ${r.runs}, emulator upstream)`,
    header: ["command", "median ms", "÷ node -e 0"],
    rows: [
      ["node -e 0", fmt(r.nodeMs), "1.0"],
      ["node bin/cursor-bridge.js serve", fmt(r.binMs), r.binRatio.toFixed(1)],
      ["npm start", fmt(r.npmStartMs), r.npmStartRatio.toFixed(1)],
    ],
    notes: ["ratio = start ÷ `node -e 0` on the same machine (tracked); npm start includes npm's own start-up"],
  };
  const targets: TargetResult[] = [
    {
      scenario: "startup",
      target: `npm start to listening, median ≤ ${STARTUP_TARGET.npmStartMedianMs} ms`,
      measured: `${fmt(r.npmStartMs)} ms (${r.npmStartRatio.toFixed(1)}× node -e 0)`,
      met: r.npmStartMs <= STARTUP_TARGET.npmStartMedianMs,
    },
  ];
  return { table, targets };
}

/** Runs the scenario for bench/run.ts (`--only=startup`) and adds its result, table and target. */
export async function addStartupScenario(
  into: { results: Record<string, unknown>; tables: Table[]; targets: TargetResult[] },
  log: (line: string) => void,
): Promise<void> {
  log("start time (npm start to the listening line)");
  const startup = await runStartup(5);
  into.results.startup = startup;
  const report = startupReport(startup);
  into.tables.push(report.table);
  into.targets.push(...report.targets);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[3] !== undefined) ROOT = process.argv[3];
  const result = await runStartup(Number(process.argv[2] ?? 5));
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
