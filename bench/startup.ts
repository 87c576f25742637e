/**
 * Scenario: start time. `npm start` (and `node bin/cursor-bridge.js serve` without npm) from spawn to the
 * "listening on" line, median of N runs, each in a throwaway HOME (so it serves the embedded emulator), next to the
 * time of `node -e 0` on the same machine. The tracked ratio is start ÷ `node -e` (machine speed cancels out); the
 * absolute target is a 400 ms median for `npm start`. The first, unmeasured run builds dist/ if it is stale.
 *
 * The server prints its listening line before it has loaded the API (requests meanwhile are held), so each start is
 * also timed to its first `/health` 200 ("ready": the API serves), asked right after the line and again every 5 ms
 * until it answers 200; an early line cannot hide a slow start.
 * The floor is measured beside it: a bare `node:http` listener printing the same line, started with `node` and with
 * `npm start` from a throwaway package, so what npm itself costs on this machine is on the table.
 * Standalone: `npx tsx bench/startup.ts [runs] [checkout]` (another checkout, e.g. to measure a baseline).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
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
  /** Medians to the first `/health` 200 (the API serves). */
  binReadyMs: number;
  npmStartReadyMs: number;
  /**
   * The floor on this machine: a bare Node HTTP listener (one ESM file that binds a port and prints the same line),
   * started with `node` and with `npm start`, medians to its line.
   */
  bareNodeMs: number;
  bareNpmStartMs: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** The status of GET `url` (0 when the connection failed), over a fresh connection. */
function statusOf(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(res.statusCode ?? 0));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(0));
    req.end();
  });
}

/** Asks `/health` until it answers 200; resolves to that moment (performance.now()). */
async function firstHealthy(baseUrl: string): Promise<number> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    if ((await statusOf(`${baseUrl}/health`)) === 200) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`${baseUrl}/health did not answer 200 within 30 s`);
}

interface StartTimes {
  /** Spawn to the line matching `until` (or to exit when there is none). */
  lineMs: number;
  /** Spawn to the first /health 200 (when `ready` was asked for). */
  readyMs: number | undefined;
}

/**
 * Spawns `command`, resolves to the ms until stdout matches `until` (or until exit when absent) and, with `ready`,
 * until the server it announced answers /health 200; then stops it.
 */
function timeSpawn(
  command: string,
  args: string[],
  until: RegExp | undefined,
  ready = false,
  cwd = ROOT,
): Promise<StartTimes> {
  const home = mkdtempSync(join(tmpdir(), "cursor-bridge-startup-"));
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, "c"), XDG_DATA_HOME: join(home, "d") };
  const started = performance.now();
  // Its own process group, so stopping it also stops the node that npm starts.
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (part: Buffer) => (stderr += part.toString()));
  const stop = () => {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
  };
  return new Promise<StartTimes>((resolve, reject) => {
    let out = "";
    let lineMs: number | undefined;
    let readyMs: number | undefined;
    let failure: unknown;
    child.stdout.on("data", (part: Buffer) => {
      out += part.toString();
      if (lineMs !== undefined || !until?.test(out)) return;
      lineMs = performance.now() - started;
      const base = out.match(/listening on (http:\/\/\S+?)\/v1/)?.[1];
      if (!ready) stop();
      else if (base === undefined) {
        failure = new Error(`no URL in the listening line:\n${out}`);
        stop();
      } else {
        firstHealthy(base)
          .then((at) => (readyMs = at - started))
          .catch((error: unknown) => (failure = error))
          .finally(stop);
      }
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      rmSync(home, { recursive: true, force: true });
      if (failure !== undefined) reject(failure);
      else if (until === undefined && code === 0) resolve({ lineMs: performance.now() - started, readyMs: undefined });
      else if (lineMs !== undefined && (!ready || readyMs !== undefined)) resolve({ lineMs, readyMs });
      else reject(new Error(`${command} ${args.join(" ")} exited (${code}) before listening:\n${stderr}`));
    });
  });
}

async function samplesOf(runs: number, once: () => Promise<StartTimes>): Promise<StartTimes[]> {
  const samples: StartTimes[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once());
  return samples;
}

/** Measures `runs` starts of each kind (after one unmeasured warm-up start that also rebuilds a stale dist/). */
export async function runStartup(runs: number): Promise<StartupResult> {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const listening = /listening on /;
  const bin = () => timeSpawn(process.execPath, ["bin/cursor-bridge.js", "serve", "--port", "0"], listening, true);
  const npmStart = () => timeSpawn(npm, ["start", "--silent", "--", "--port", "0"], listening, true);
  await bin();
  const nodeMs = median(
    (await samplesOf(runs, () => timeSpawn(process.execPath, ["-e", "0"], undefined))).map((s) => s.lineMs),
  );
  const binSamples = await samplesOf(runs, bin);
  const npmSamples = await samplesOf(runs, npmStart);
  const bare = bareListenerPackage();
  const bareNode = () => timeSpawn(process.execPath, ["listener.mjs"], listening, false, bare);
  const bareNpm = () => timeSpawn(npm, ["start", "--silent"], listening, false, bare);
  let bareNodeMs: number;
  let bareNpmStartMs: number;
  try {
    bareNodeMs = median((await samplesOf(runs, bareNode)).map((s) => s.lineMs));
    bareNpmStartMs = median((await samplesOf(runs, bareNpm)).map((s) => s.lineMs));
  } finally {
    rmSync(bare, { recursive: true, force: true });
  }
  const binMs = median(binSamples.map((s) => s.lineMs));
  const npmStartMs = median(npmSamples.map((s) => s.lineMs));
  return {
    runs,
    nodeMs,
    binMs,
    npmStartMs,
    binRatio: binMs / nodeMs,
    npmStartRatio: npmStartMs / nodeMs,
    binReadyMs: median(binSamples.map((s) => s.readyMs ?? Number.NaN)),
    npmStartReadyMs: median(npmSamples.map((s) => s.readyMs ?? Number.NaN)),
    bareNodeMs,
    bareNpmStartMs,
  };
}

/** A throwaway package whose `npm start` runs a bare HTTP listener printing a line like the bridge's. */
function bareListenerPackage(): string {
  const dir = mkdtempSync(join(tmpdir(), "cursor-bridge-bare-listener-"));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "bare-listener", private: true, type: "module", scripts: { start: "node listener.mjs" } }),
  );
  writeFileSync(
    join(dir, "listener.mjs"),
    'import { createServer } from "node:http";\n' +
      'const server = createServer((_, res) => res.end("ok"));\n' +
      'server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port + "/v1"));\n',
  );
  return dir;
}

/** The scenario's table and its target. */
export function startupReport(r: StartupResult): { table: Table; targets: TargetResult[] } {
  const table: Table = {
    title: `Start time to the listening line and to the first /health 200 (median of ${r.runs}, emulator upstream)`,
    header: ["command", "listening ms", "÷ node -e 0", "ready ms (/health 200)"],
    rows: [
      ["node -e 0", fmt(r.nodeMs), "1.0", "–"],
      ["node bin/cursor-bridge.js serve", fmt(r.binMs), r.binRatio.toFixed(1), fmt(r.binReadyMs)],
      ["npm start", fmt(r.npmStartMs), r.npmStartRatio.toFixed(1), fmt(r.npmStartReadyMs)],
      ["floor: node on a bare HTTP listener", fmt(r.bareNodeMs), (r.bareNodeMs / r.nodeMs).toFixed(1), "–"],
      ["floor: npm start of that listener", fmt(r.bareNpmStartMs), (r.bareNpmStartMs / r.nodeMs).toFixed(1), "–"],
    ],
    notes: [
      "ratio = start ÷ `node -e 0` on the same machine (tracked); npm start includes npm's own start-up",
      "ready = first /health 200 (the API serves; requests sent earlier are held, not refused); not a target",
    ],
  };
  const targets: TargetResult[] = [
    {
      scenario: "startup",
      target: `npm start to listening, median ≤ ${STARTUP_TARGET.npmStartMedianMs} ms`,
      measured: `${fmt(r.npmStartMs)} ms (${r.npmStartRatio.toFixed(1)}× node -e 0; npm start of a bare listener ${fmt(r.bareNpmStartMs)} ms)`,
      met: r.npmStartMs <= STARTUP_TARGET.npmStartMedianMs,
    },
  ];
  return { table, targets };
}

/** Runs the scenario for bench/run.ts (`--only=startup`) and adds its result, table and target. */
export async function addStartupScenario(
  into: { results: Record<string, unknown>; tables: Table[]; targets: TargetResult[] },
  log: (line: string) => void,
  runs = 5,
): Promise<void> {
  log("start time (npm start to the listening line)");
  const startup = await runStartup(runs);
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
