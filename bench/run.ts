/**
 * `npm run bench [-- --quick] [-- --only=overhead,memory,throughput,rebuild,tools,memory-budget,soak,startup,cluster,gateway]`: cursor-bridge side
 * by side with a direct connect-es client and the replay baselines, all against the emulator on loopback. Three
 * processes: the emulator and the bridge are children (bench/bench-stack.ts), this one generates the load. Prints
 * the tables and one line per target ending in `met` or `MISSED`, and writes bench/results.json for a full run
 * (ratios with their spread, and the load average around every scenario; committed with the README's table) or
 * bench/results-partial.json for `--quick`/`--only`. Re-executes itself under `node --expose-gc` without touching
 * package.json's `tsx bench/run.ts`.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startBenchStack } from "./bench-stack.js";
import { capacityReport, type MemoryResult, runMemory, runThroughput, type ThroughputResult } from "./capacity.js";
import { clusterReport, runCluster } from "./cluster.js";
import { conversationReport, runContinuation, runToolRoundTrips } from "./conversations.js";
import { gatewayOverheadReport, runGatewayOverhead } from "./gateway-overhead.js";
import { memoryBudgetReport, runMemoryBudget } from "./memory-budget.js";
import { overheadTable, overheadTargets, runOverhead } from "./overhead.js";
import { REBUILD_TARGET, rebuildReport, runRebuild } from "./rebuild.js";
import { fmtLoad, renderReport, type Table, type TargetResult, withLoadAverage } from "./report.js";
import { runSoak, soakReport } from "./soak.js";
import { closeIdleSockets } from "./sse-client.js";
import { addStartupScenario } from "./startup.js";

function reexecWithGc(): never {
  const script = fileURLToPath(import.meta.url);
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", import.meta.resolve("tsx"), script, ...process.argv.slice(2)],
    { stdio: "inherit", env: { ...process.env, CURSOR_BRIDGE_BENCH_CHILD: "1" } },
  );
  process.exit(child.status ?? 1);
}

/** Everything that differs between the full and the quick run. */
function settingsFor(quick: boolean) {
  return {
    mode: quick ? "quick" : "full",
    /** Overhead emulator: bootstrap 0 so the comparison isolates the bridge; realistic token pacing. */
    overheadEmulator: { bootstrapLatencyMs: 0, tokensPerSecond: 50 },
    overheadTokens: quick ? 10 : 20,
    /** Rounds per side in one repetition: a round is `concurrency` simultaneous streams. */
    rounds: (c: number) => (c === 1 ? (quick ? 3 : 10) : quick ? 1 : 2),
    repetitions: quick ? 3 : 5,
    /** Conversation emulator: realistic bootstrap latency (quick mode shortens it) and token rate. */
    conversationEmulator: quick
      ? { bootstrapLatencyMs: 100, tokensPerSecond: 200 }
      : { bootstrapLatencyMs: 300, tokensPerSecond: 100 },
    toolCalls: 10,
    turns: 20,
    parked: quick ? 300 : 1000,
    throughputStreams: 200,
    throughputTokens: quick ? 40 : 100,
    warmup: quick ? 3 : 5,
    /** Rebuild: history sizes (the target is at 10,000) and repeats per size. */
    rebuildSizes: [2_500, REBUILD_TARGET.messages],
    rebuildRepeats: quick ? 1 : 3,
    /** Starts of each kind in the start-time scenario (median reported). */
    startupRuns: quick ? 3 : 5,
  };
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== "function") {
    if (process.env.CURSOR_BRIDGE_BENCH_CHILD === "1") throw new Error("global.gc is missing even under --expose-gc");
    reexecWithGc();
  }
  const quick = process.argv.includes("--quick");
  const s = settingsFor(quick);
  const started = performance.now();
  const log = (line: string) =>
    process.stderr.write(
      `[bench] ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  load ${fmtLoad(loadavg())}  ${line}\n`,
    );
  const tables: Table[] = [];
  const targets: TargetResult[] = [];

  const loadBefore = loadavg();
  log(
    `mode ${s.mode}; emulator, bridge and load generator in 3 processes; ${cpus().length} CPUs; node ${process.version}; load ${fmtLoad(loadBefore)}`,
  );
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
  const wanted = (name: string) => only === undefined || only.split(",").includes(name);
  const results: Record<string, unknown> = {};

  if (wanted("overhead") || wanted("memory") || wanted("throughput") || wanted("rebuild")) {
    const fast = await startBenchStack(s.overheadEmulator);
    try {
      if (wanted("overhead")) {
        log("overhead");
        const overhead = await runOverhead(fast, {
          concurrencies: [1, 50, 200],
          rounds: s.rounds,
          repetitions: s.repetitions,
          tokens: s.overheadTokens,
          warmup: s.warmup,
        });
        results.overhead = overhead;
        tables.push(
          overheadTable(overhead, [
            `emulator bootstrap latency 0 ms (isolates the bridge), ${s.overheadEmulator.tokensPerSecond} tokens/s, ${s.overheadTokens} text tokens per reply`,
            "percentiles are medians over the repetitions; ratios are bridge ÷ direct per repetition, median (lowest–highest)",
            "the bridge path includes the client's HTTP/1.1 SSE hop; load avg = 1-minute load average after the concurrency",
          ]),
        );
        targets.push(...overheadTargets(overhead));
      }
      if (wanted("memory") || wanted("throughput")) {
        let memory: MemoryResult | undefined;
        let throughput: ThroughputResult | undefined;
        if (wanted("memory")) {
          log("memory per parked conversation");
          const run = await withLoadAverage(() => runMemory(fast, s.parked));
          memory = { ...run.result, loadAverage: run.loadAverage };
          results.memory = memory;
        }
        if (wanted("throughput")) {
          log("throughput");
          const run = await withLoadAverage(() =>
            runThroughput(fast, s.throughputStreams, s.throughputTokens, s.repetitions),
          );
          throughput = { ...run.result, loadAverage: run.loadAverage };
          results.throughput = throughput;
        }
        const cap = capacityReport(memory, throughput);
        tables.push(...cap.tables);
        targets.push(...cap.targets);
      }
      if (wanted("rebuild")) {
        log("rebuild from history");
        const { result: rebuild, loadAverage } = await withLoadAverage(() =>
          runRebuild(fast, s.rebuildSizes, s.rebuildRepeats),
        );
        results.rebuild = { ...rebuild, loadAverage };
        const rb = rebuildReport(rebuild);
        tables.push(rb.table);
        targets.push(...rb.targets);
      }
    } finally {
      await fast.close();
    }
  }
  if (wanted("tools") || wanted("continuation")) {
    const realistic = await startBenchStack(s.conversationEmulator);
    try {
      log("tool round trips");
      const toolRun = await withLoadAverage(() =>
        runToolRoundTrips(realistic, s.toolCalls, s.conversationEmulator.bootstrapLatencyMs),
      );
      const tools = toolRun.result;
      log("continuation");
      const contRun = await withLoadAverage(() => runContinuation(realistic, s.turns));
      const continuation = contRun.result;
      Object.assign(results, {
        toolRoundTrips: { ...tools, loadAverage: toolRun.loadAverage },
        continuation: { ...continuation, loadAverage: contRun.loadAverage },
      });
      const conv = conversationReport(tools, continuation);
      tables.push(...conv.tables);
      targets.push(...conv.targets);
    } finally {
      await realistic.close();
      closeIdleSockets();
    }
  }

  if (wanted("memory-budget")) {
    log("memory budget (serve --upstream emulator in its own process)");
    const { result: memoryBudget, loadAverage } = await withLoadAverage(() => runMemoryBudget());
    results.memoryBudget = { ...memoryBudget, loadAverage };
    const mb = memoryBudgetReport(memoryBudget);
    tables.push(mb.table);
    targets.push(...mb.targets);
  }

  // The soak takes about three minutes: full runs only (or --only=soak).
  if ((!quick && only === undefined) || only?.split(",").includes("soak")) {
    log("soak: 2 × 60 s at 150 concurrent, then idle (serve --upstream emulator in its own process)");
    const { result: soak, loadAverage } = await withLoadAverage(() => runSoak());
    results.soak = { ...soak, loadAverage };
    const report = soakReport(soak);
    tables.push(report.table);
    targets.push(...report.targets);
  }

  if (wanted("gateway")) {
    log("team gateway overhead (in-process, gateway off vs on)");
    const { result: gateway, loadAverage } = await withLoadAverage(() => runGatewayOverhead(quick ? 500 : 2000, 5));
    results.gateway = { ...gateway, loadAverage };
    const report = gatewayOverheadReport(gateway);
    tables.push(report.table);
    targets.push(...report.targets);
  }
  if (wanted("startup")) await addStartupScenario({ results, tables, targets }, log, s.startupRuns);
  if (wanted("cluster")) {
    log("two instances on one Redis behind HAProxy (issue 18)");
    const cluster = await runCluster(quick ? 60 : 300, 8);
    results.cluster = cluster;
    tables.push(clusterReport(cluster));
  }

  const loadAfter = loadavg();
  const report = renderReport(tables, targets);
  process.stdout.write(
    `# cursor-bridge benchmark (${s.mode}${quick ? `: bootstrap ${s.conversationEmulator.bootstrapLatencyMs} ms instead of 300 ms, fewer samples` : ""})\n`,
  );
  process.stdout.write(report);
  process.stdout.write(
    `\nload average (1/5/15 min) before ${fmtLoad(loadBefore)}, after ${fmtLoad(loadAfter)} on ${cpus().length} CPUs\n`,
  );
  const summary = {
    mode: s.mode,
    only: only ?? "all",
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage: { before: loadBefore, after: loadAfter },
    durationMs: Math.round(performance.now() - started),
    settings: { ...s, rounds: [1, 50, 200].map((c) => ({ concurrency: c, roundsPerRepetition: s.rounds(c) })) },
    ...results,
    targets,
  };
  // A full run's results are the record the README's table comes from (committed); a quick or partial run writes
  // beside it, so trying one scenario never overwrites that record.
  const name = s.mode === "full" && only === undefined ? "results.json" : "results-partial.json";
  const out = fileURLToPath(new URL(`./${name}`, import.meta.url));
  writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  log(`done in ${(summary.durationMs / 1000).toFixed(1)} s; wrote ${out}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
