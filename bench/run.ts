/**
 * `npm run bench [-- --quick] [-- --only=overhead,floor,throughput,memory,tools,continuation,rebuild,memory-budget,soak,startup,cluster,gateway]`:
 * `cursor-bridge serve` as shipped (a child process: file store in a throwaway data dir, logged in to the emulator,
 * over real sockets) side by side with a direct connect-es client (the physical limit) and the replay baselines, all
 * against the emulator on loopback. Three processes: the emulator and serve are children (bench/bench-stack.ts), this
 * one generates the load. Prints the tables and one line per target with the floor it is held against (measured in
 * the same run: bench/targets.ts) ending in `met` or `MISSED` (met only when the worst repetition meets it; a floor
 * that was not measured makes its target MISSED), then the retired targets with the reason, and writes
 * bench/results.json for a full run (ratios with their spread, and the load average around every scenario; committed
 * with docs/performance.md's table) or bench/results-partial.json for `--quick`/`--only`. `--quick` keeps every
 * scenario, target and stream length and trims only repetitions; it skips the three-minute soak and the hop floor's
 * own scenario (the targets' floor, the HTTP/2 relay at 1 and 200 streams and for throughput, runs in the same rounds
 * as serve in every run), and ends with its own target: the run's wall time ≤ 150 s.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startBenchStack } from "./bench-stack.js";
import { runThroughput, throughputReport } from "./capacity.js";
import { clusterReport, runCluster } from "./cluster.js";
import { conversationReport, runContinuation, runToolRoundTrips } from "./conversations.js";
import { gatewayOverheadReport, runGatewayOverhead } from "./gateway-overhead.js";
import { type HopFloorResult, hopFloorReport, type RunningRelay, runHopFloor, startRelay } from "./hop-floor.js";
import { latencyCases, latencyReport, runLatency } from "./latency.js";
import { memoryBudgetReport, runMemoryBudget } from "./memory-budget.js";
import type { OverheadResult } from "./overhead.js";
import { parkedMemoryReport, runParkedMemory } from "./parked-memory.js";
import { REBUILD_TARGET, rebuildReport, runRebuild } from "./rebuild.js";
import { fmtLoad, renderReport, type Table, type TargetResult, withLoadAverage } from "./report.js";
import { runSoak, soakReport } from "./soak.js";
import { closeIdleSockets } from "./sse-client.js";
import { addStartupScenario } from "./startup.js";
import { quickRunTarget, RETIRED_TARGETS } from "./targets.js";
import { runToolTrips, toolTripReport } from "./tool-trips.js";

/**
 * CPU seconds of this process and every child it has reaped (emulators, serves, npm and what it ran), from
 * /proc/self/stat: ÷ the CPU count, the least wall time the run could take on an idle machine.
 */
function treeCpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime, stime, cutime, cstime: fields 14–17, in clock ticks (USER_HZ = 100).
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
}

/**
 * Seconds since the run was launched: since the start of the outermost ancestor that is part of the bench's command
 * (`npm run bench`, the shell npm runs, tsx), from /proc (start times in clock ticks since boot); this process's own
 * age where /proc cannot be read.
 */
function wallSecondsSinceLaunch(): number {
  try {
    const stat = (pid: number) => {
      const text = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      // ppid is field 4, starttime field 22 (clock ticks since boot, USER_HZ = 100).
      return { ppid: Number(fields[1]), startedAt: Number(fields[19]) / 100 };
    };
    let current = stat(process.pid);
    let startedAt = current.startedAt;
    for (let depth = 0; depth < 8 && current.ppid > 1; depth++) {
      const command = readFileSync(`/proc/${current.ppid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (!/\bnpm\b|npm-cli|\btsx\b|bench\/run\.ts/.test(command)) break;
      current = stat(current.ppid);
      startedAt = current.startedAt;
    }
    const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    if (Number.isFinite(uptime) && Number.isFinite(startedAt)) return uptime - startedAt;
  } catch {
    // not Linux: fall through
  }
  return performance.now() / 1000;
}

/**
 * Everything that differs between the full and the quick run: repetitions, and what has no target of its own (the
 * soak, the TCP relay, the non-streaming latency case, the post-GC parked serve). The quick run's are sized to finish
 * within 150 s on an idle 2-core machine, its last target line (its CPU seconds ÷ 2 are its floor).
 */
function settingsFor(quick: boolean) {
  return {
    mode: quick ? "quick" : "full",
    /** Latency emulator: bootstrap 0 so the comparison isolates the bridge; realistic token pacing. */
    overheadEmulator: { bootstrapLatencyMs: 0, tokensPerSecond: 50 },
    latency: {
      repetitions: quick ? 3 : 5,
      singleRounds: quick ? 20 : 60,
      rounds200: quick ? 1 : 2,
      repetitions1000: quick ? 2 : 3,
      warmup: quick ? 2 : 5,
      nonStreaming: !quick,
    },
    throughputStreams: 200,
    /** Two stream lengths: CPU per chunk is the slope between them (bench/capacity.ts). */
    throughputTokens: { short: 10, long: 100 },
    throughputRepetitions: quick ? 2 : 5,
    /**
     * The hop floor on its own (bench/hop-floor.ts): full runs and `--only=floor`, both relays in every case up to 200
     * streams with the latency repetitions above, and these throughput pairs. The targets' floor is the HTTP/2 relay
     * run in the same rounds as serve instead (the latency cases and throughput).
     */
    floor: { throughputRepetitions: quick ? 2 : 5 },
    parkedCounts: [200, 1000],
    /** Pairs of a fresh raw serve and a fresh direct client in scenario 4 (each about 7 s at 1,000 parked). */
    parkedRepetitions: quick ? 1 : 3,
    /** Conversation emulator: realistic bootstrap latency and token rate. */
    conversationEmulator: { bootstrapLatencyMs: 100, tokensPerSecond: 200 },
    toolCalls: 10,
    toolRepetitions: quick ? 2 : 5,
    turns: 20,
    /** Rebuild: history sizes (the target is at 10,000) and repeats per size. */
    rebuildSizes: [2_500, REBUILD_TARGET.messages],
    rebuildRepeats: quick ? 1 : 3,
    /** Cold start: repetitions × starts of each kind per repetition. */
    startupRepetitions: quick ? 3 : 5,
    startupPerRepetition: quick ? 1 : 3,
    /** The cluster and gateway scenarios: no floor to measure; fewer of them in the quick run. */
    clusterConversations: quick ? 20 : 300,
    gatewayRequests: quick ? 500 : 2000,
    gatewayRepetitions: quick ? 3 : 5,
  };
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const s = settingsFor(quick);
  const started = performance.now();
  const log = (line: string) =>
    process.stderr.write(
      `[bench] ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  cpu ${treeCpuSeconds().toFixed(0).padStart(4)} s  load ${fmtLoad(loadavg())}  ${line}\n`,
    );
  const tables: Table[] = [];
  const targets: TargetResult[] = [];

  const loadBefore = loadavg();
  log(
    `mode ${s.mode}; emulator, serve and load generator in 3 processes; ${cpus().length} CPUs; node ${process.version}; load ${fmtLoad(loadBefore)}`,
  );
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length);
  const wanted = (name: string) => only === undefined || only.split(",").includes(name);
  const results: Record<string, unknown> = {};
  const add = (report: { table?: Table; tables?: Table[]; targets: TargetResult[] }) => {
    if (report.table !== undefined) tables.push(report.table);
    tables.push(...(report.tables ?? []));
    targets.push(...report.targets);
  };

  // The targets of the latency cases and of throughput are held against the HTTP/2 relay, run in the same rounds as
  // serve and the direct client (paired per repetition: a floor measured under the same load). A full run (or
  // --only=floor) also measures the hop floor on its own, both relays in every case up to 200 streams, for its tables.
  const fullFloor = (!quick && only === undefined) || only?.split(",").includes("floor") === true;
  const relayWanted = wanted("overhead") || wanted("throughput");
  if (wanted("overhead") || fullFloor || wanted("memory") || wanted("throughput") || wanted("rebuild")) {
    const fast = await startBenchStack(s.overheadEmulator);
    let relay: RunningRelay | undefined;
    try {
      if (relayWanted) {
        try {
          relay = await startRelay(fast, "h2");
        } catch (error) {
          // Its targets then say their floor was not measured, and count as missed.
          log(`  the HTTP/2 relay did not start (its targets count as missed): ${errorText(error)}`);
        }
      }
      let latency: OverheadResult[] | undefined;
      if (wanted("overhead")) {
        log(
          `latency: ${latencyCases(s.latency)
            .map((c) => c.label)
            .join(", ")}${relay === undefined ? "" : " (the HTTP/2 relay in the same rounds up to 200 streams)"}`,
        );
        latency = await runLatency(
          fast,
          s.latency,
          undefined,
          undefined,
          undefined,
          (label) => log(`  latency: ${label}`),
          relay?.side,
        );
        results.overhead = latency;
      }
      let floor: HopFloorResult | undefined;
      if (fullFloor) {
        log("floor of one hop: the direct client straight and through relays that parse nothing");
        try {
          const run = await withLoadAverage(() =>
            runHopFloor(
              fast,
              latencyCases(s.latency).filter((c) => c.concurrency <= 200),
              s.latency.warmup * 20,
              s.floor.throughputRepetitions,
              (kind) => log(`  floor: ${kind} relay`),
            ),
          );
          floor = run.result;
          results.hopFloor = { ...run.result, loadAverage: run.loadAverage };
        } catch (error) {
          log(`  floor failed: ${errorText(error)}`);
          results.hopFloor = { error: errorText(error) };
        }
      }
      if (latency !== undefined) add(latencyReport(latency, floor));
      if (floor !== undefined) tables.push(...hopFloorReport(floor));
      if (wanted("throughput")) {
        log(`throughput and CPU per request / per chunk${relay === undefined ? "" : " (and the HTTP/2 relay)"}`);
        const run = await withLoadAverage(() =>
          runThroughput(fast, s.throughputStreams, s.throughputTokens, s.throughputRepetitions, relay),
        );
        results.throughput = { ...run.result, loadAverage: run.loadAverage };
        add(throughputReport(run.result, floor));
      }
      if (wanted("memory")) {
        log(
          `memory per parked conversation at ${s.parkedCounts.join(" and ")} (${s.parkedRepetitions} pair${s.parkedRepetitions === 1 ? "" : "s"} of a fresh serve and a fresh direct client${quick ? "" : ", then a post-GC serve"})`,
        );
        const run = await withLoadAverage(() =>
          runParkedMemory(fast, s.parkedCounts, !quick, log, s.parkedRepetitions),
        );
        results.memory = { ...run.result, loadAverage: run.loadAverage };
        add(parkedMemoryReport(run.result));
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
      await relay?.close();
      await fast.close();
      closeIdleSockets();
    }
  }
  if (wanted("tools")) {
    log("tool round trips against the direct client, with and without call_count");
    const run = await withLoadAverage(() => runToolTrips(s.conversationEmulator, s.toolCalls, s.toolRepetitions));
    results.toolTrips = { ...run.result, loadAverage: run.loadAverage };
    add(toolTripReport(run.result));
  }
  if (wanted("tools") || wanted("continuation")) {
    const realistic = await startBenchStack(s.conversationEmulator);
    try {
      log("tool round trips against the replay baselines");
      const toolRun = await withLoadAverage(() =>
        runToolRoundTrips(realistic, s.toolCalls, s.conversationEmulator.bootstrapLatencyMs),
      );
      log("continuation");
      const contRun = await withLoadAverage(() => runContinuation(realistic, s.turns));
      Object.assign(results, {
        toolRoundTrips: { ...toolRun.result, loadAverage: toolRun.loadAverage },
        continuation: { ...contRun.result, loadAverage: contRun.loadAverage },
      });
      add(conversationReport(toolRun.result, contRun.result));
    } finally {
      await realistic.close();
      closeIdleSockets();
    }
  }

  if (wanted("memory-budget")) {
    log("memory budget (serve --upstream emulator in its own process)");
    const { result: memoryBudget, loadAverage } = await withLoadAverage(() => runMemoryBudget());
    results.memoryBudget = { ...memoryBudget, loadAverage };
    add(memoryBudgetReport(memoryBudget));
  }

  // The soak takes about three minutes: full runs only (or --only=soak).
  if ((!quick && only === undefined) || only?.split(",").includes("soak")) {
    log("soak: 2 × 60 s at 150 concurrent, then idle (serve --upstream emulator in its own process)");
    const { result: soak, loadAverage } = await withLoadAverage(() => runSoak());
    results.soak = { ...soak, loadAverage };
    add(soakReport(soak));
  }

  if (wanted("gateway")) {
    log("team gateway overhead (in-process, gateway off vs on)");
    const { result: gateway, loadAverage } = await withLoadAverage(() =>
      runGatewayOverhead(s.gatewayRequests, s.gatewayRepetitions),
    );
    results.gateway = { ...gateway, loadAverage };
    add(gatewayOverheadReport(gateway));
  }
  if (wanted("startup"))
    await addStartupScenario({ results, tables, targets }, log, s.startupRepetitions, s.startupPerRepetition);
  if (wanted("cluster")) {
    log("two instances on one Redis behind HAProxy (issue 18)");
    const cluster = await runCluster(s.clusterConversations, 8);
    results.cluster = cluster;
    tables.push(clusterReport(cluster));
  }

  // The quick run's own target, last: its wall time from the launch of `npm run bench -- --quick`.
  if (quick && only === undefined)
    targets.push(quickRunTarget(wallSecondsSinceLaunch(), treeCpuSeconds(), cpus().length));
  const loadAfter = loadavg();
  const report = renderReport(tables, targets, RETIRED_TARGETS);
  process.stdout.write(
    `# cursor-bridge benchmark (${s.mode}${quick ? ": fewer repetitions, no soak, the floors the targets need" : ""})\n`,
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
    /** CPU seconds of the bench and all its children: ÷ cpus, the wall time on an idle machine at the least. */
    cpuSeconds: treeCpuSeconds(),
    settings: s,
    ...results,
    targets,
    retiredTargets: RETIRED_TARGETS,
  };
  // A full run's results are the record docs/performance.md's table comes from (committed; `npx tsx
  // bench/performance-table.ts --write` puts it there); a quick or partial run writes
  // beside it, so trying one scenario never overwrites that record.
  const name = s.mode === "full" && only === undefined ? "results.json" : "results-partial.json";
  const out = fileURLToPath(new URL(`./${name}`, import.meta.url));
  writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`);
  log(
    `done in ${(summary.durationMs / 1000).toFixed(1)} s (load ${fmtLoad(loadBefore)} → ${fmtLoad(loadAfter)}); the bench and its children used ${summary.cpuSeconds.toFixed(1)} CPU s (${(summary.cpuSeconds / cpus().length).toFixed(1)} s on ${cpus().length} idle CPUs); wrote ${out}`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`[bench] failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
