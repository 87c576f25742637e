/**
 * Scenario 5, throughput and CPU: `streams` concurrent streams at two stream lengths (a short and a long one), direct
 * and through serve. Emulator, serve and load generator are three processes: serve's CPU is its own (/proc), set
 * against the direct client's (the load generator's while it runs only that client).
 *
 * Per-request and per-chunk costs are separated by the slope between the two lengths. With R requests of n chunks,
 * CPU(n) = R × perRequest + R × n × perChunk, so perChunk = (CPU(long) − CPU(short)) ÷ (R × (long − short)) and
 * perRequest = CPU(short) ÷ R − short × perChunk. One stream length alone would mix the two: at 40 tokens the
 * request's fixed cost dominated "CPU per chunk". Throughput (chunks/s) is that of the long streams.
 *
 * Targets, each against a floor of the same run: throughput ≥ the HTTP/2 relay's ratio − 0.03 on every repetition (the
 * direct client through the relay of bench/hop-floor.ts, run in the same repetitions, paired); serve's CPU per
 * request ≤ 1.2 × the direct client's CPU for the same whole turn (the short stream's CPU ÷ its requests, both sides,
 * paired per repetition); CPU per chunk ≤ the direct client's.
 */

import { IDLE_MS } from "../src/server/idle-memory.js";
import type { BenchStack } from "./bench-stack.js";
import { type HopFloorResult, type RunningRelay, relayCpuPerTurn, relayFigure, relayThroughput } from "./hop-floor.js";
import { runConcurrentPromptTurns } from "./raw-driver.js";
import {
  fmt,
  fmtSpread,
  type LoadAverage,
  type Row,
  type Spread,
  spreadOf,
  spreadTarget,
  type Table,
  type TargetResult,
} from "./report.js";
import { streamCompletion } from "./sse-client.js";
import { floorTarget, minus, times } from "./targets.js";
import { inBursts, SHORT_TURN_BURSTS, throughputPrompt } from "./workload.js";

/** One side at one stream length in one repetition of scenario 5. */
export interface ThroughputSide {
  /** Requests the reading spans (absent in records before 2026-11-27's evening: one burst, `streams`). */
  requests?: number;
  chunks: number;
  wallMs: number;
  chunksPerSecond: number;
  /**
   * CPU (user + system) in ms of the process doing this side's Cursor client work: the load generator for the direct
   * client, the serve process for cursor-bridge.
   */
  cpuMs: number;
  /** CPU of the load generator (for the bridge side: the SSE clients reading the streams), ms. */
  loadGeneratorCpuMs: number;
  /** CPU of the emulator process, ms. */
  emulatorCpuMs: number;
}

/** One side in one repetition: both lengths and the costs derived from them. */
export interface ThroughputRep {
  short: ThroughputSide;
  long: ThroughputSide;
  /** CPU µs per chunk: the slope between the two lengths. */
  cpuUsPerChunk: number;
  /** CPU µs per request: the short run's CPU per request less its chunks at the slope. */
  cpuUsPerRequest: number;
}

/** Scenario 5 result. */
export interface ThroughputResult {
  streams: number;
  tokens: { short: number; long: number };
  repetitions: number;
  direct: ThroughputRep[];
  bridge: ThroughputRep[];
  /** bridge ÷ direct chunks per second of the long streams, per repetition. */
  throughputRatio: Spread;
  /** bridge ÷ direct CPU per chunk (the slope), per repetition. */
  cpuPerChunkRatio: Spread;
  /** bridge ÷ direct CPU per request, per repetition. */
  cpuPerRequestRatio: Spread;
  /** bridge ÷ direct CPU per 1,000 chunks of the long streams, both costs together (the former single figure). */
  cpuLongRatio: Spread;
  /** Readings preceded by a warm-up again, their side having idled past serve's idle-memory delay (see runThroughput). */
  rewarmed?: number;
  /**
   * The HTTP/2 relay (bench/hop-floor.ts) in the same repetitions, the side that starts rotating with the other two:
   * the direct client through it, the floor the throughput target is held against, paired per repetition.
   */
  relay?: {
    /** Chunks per second of the long streams, per repetition. */
    chunksPerSecond: number[];
    /** relay ÷ direct, per repetition. */
    ratio: Spread;
    /** The relay process's own CPU µs per whole short turn, per repetition. */
    cpuUsPerTurn: number[];
  };
  loadAverage?: LoadAverage;
}

const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;

async function measure(
  stack: BenchStack,
  side: "direct" | "bridge",
  work: () => Promise<number>,
  requests: number,
): Promise<ThroughputSide> {
  const [bridgeCpu, emulatorCpu] = await Promise.all([stack.bridge.cpuUsage(), stack.emulator.cpuUsage()]);
  const ownCpu = process.cpuUsage();
  const started = performance.now();
  const chunks = await work();
  const wallMs = performance.now() - started;
  const ownUsed = cpuMs(ownCpu, process.cpuUsage());
  const [bridgeNow, emulatorNow] = await Promise.all([stack.bridge.cpuUsage(), stack.emulator.cpuUsage()]);
  return {
    requests,
    chunks,
    wallMs,
    chunksPerSecond: (chunks * 1000) / wallMs,
    cpuMs: side === "direct" ? ownUsed : cpuMs(bridgeCpu, bridgeNow),
    loadGeneratorCpuMs: ownUsed,
    emulatorCpuMs: cpuMs(emulatorCpu, emulatorNow),
  };
}

/** CPU ms per request of one reading. */
const perRequestOf = (side: ThroughputSide, streams: number) => side.cpuMs / (side.requests ?? streams);

function derive(streams: number, tokens: ThroughputResult["tokens"], short: ThroughputSide, long: ThroughputSide) {
  const shortMs = perRequestOf(short, streams);
  const perChunkMs = (perRequestOf(long, streams) - shortMs) / (tokens.long - tokens.short);
  const perRequestMs = shortMs - tokens.short * perChunkMs;
  return { short, long, cpuUsPerChunk: perChunkMs * 1000, cpuUsPerRequest: perRequestMs * 1000 };
}

/**
 * Scenario 5: `streams` concurrent streams of `tokens.short` and of `tokens.long` one-token text deltas each, direct
 * and through serve (and through `relay` when given), in `repetitions` rounds whose first side rotates (after a
 * warm-up of SHORT_TURN_BURSTS bursts of short turns per side).
 */
export async function runThroughput(
  stack: BenchStack,
  streams: number,
  tokens: ThroughputResult["tokens"],
  repetitions: number,
  relay?: RunningRelay,
): Promise<ThroughputResult> {
  const directBurst = (n: number) => runConcurrentPromptTurns(stack.direct, streams, throughputPrompt(n), n);
  const bridgeBurst = async (n: number) =>
    (
      await Promise.all(
        Array.from({ length: streams }, async () => {
          const r = await streamCompletion(stack.bridge.baseURL, {
            model: "auto",
            messages: [{ role: "user", content: throughputPrompt(n) }],
          });
          if (r.contentChunks !== n) throw new Error(`bridge stream: ${r.contentChunks} of ${n} chunks`);
          return r.contentChunks;
        }),
      )
    ).reduce((a, b) => a + b, 0);
  const direct =
    (n: number, count = 1) =>
    () =>
      inBursts(count, () => directBurst(n));
  const bridge =
    (n: number, count = 1) =>
    () =>
      inBursts(count, () => bridgeBurst(n));
  // Warm-up, the same for both sides: as many short turns as one reading. After the scenarios before this one serve
  // has idled (its idle-memory collections shrank its heap), and its first 1,000 turns then cost up to 1.7 times the
  // next 1,000 (1,830 against 1,080 ms of CPU in one quick run) while the heap and the young generation grow back.
  const relayBurst =
    (n: number, count = 1) =>
    () =>
      inBursts(count, () => runConcurrentPromptTurns((relay as RunningRelay).client, streams, throughputPrompt(n), n));
  const warmUps = {
    direct: direct(tokens.short, SHORT_TURN_BURSTS),
    bridge: bridge(tokens.short, SHORT_TURN_BURSTS),
    relay: relayBurst(tokens.short, SHORT_TURN_BURSTS),
  };
  /** When each side last ran (performance.now()): a side idle for longer than {@link REWARM_AFTER_MS} is warmed again. */
  const lastRan = new Map<keyof typeof warmUps, number>();
  let rewarmed = 0;
  const warm = async (side: keyof typeof warmUps) => {
    await warmUps[side]();
    lastRan.set(side, performance.now());
  };
  /**
   * A reading starts on a warm process. Between two readings of one side the other sides run theirs; when that took
   * serve past its idle-memory delay (src/server/idle-memory.ts), serve collected and shrank its heap, and its next
   * 1,000 turns paid for growing it back (200-stream bursts right after a collection: 2,950, 2,300, 1,700, 1,650,
   * 1,400, 1,350 µs per turn; after 3 s idle: 1,050–1,350), which made one repetition of five decide the CPU target
   * (2.79× in the record of 2026-11-28, the repetition where serve went first, then last). Every side is warmed again
   * alike, so neither is measured cold.
   */
  const rewarmIfIdle = async (side: keyof typeof warmUps) => {
    const last = lastRan.get(side);
    if (last === undefined || performance.now() - last < REWARM_AFTER_MS) return;
    rewarmed += 1;
    await warm(side);
  };
  await warm("direct");
  await warm("bridge");
  if (relay !== undefined) await warm("relay");
  const directReps: ThroughputRep[] = [];
  const bridgeReps: ThroughputRep[] = [];
  const relayed = { chunksPerSecond: [] as number[], cpuUsPerTurn: [] as number[] };
  const sides = relay === undefined ? (["direct", "bridge"] as const) : (["direct", "bridge", "relay"] as const);
  for (let rep = 0; rep < repetitions; rep++) {
    for (let i = 0; i < sides.length; i++) {
      const side = sides[(rep + i) % sides.length] as (typeof sides)[number];
      await rewarmIfIdle(side);
      if (side === "relay") {
        // The relay's own CPU per whole short turn (as serve's is counted), then its throughput from one long burst.
        const cpuUs = await (relay as RunningRelay).cpuUs(relayBurst(tokens.short, SHORT_TURN_BURSTS));
        relayed.cpuUsPerTurn.push(cpuUs / (streams * SHORT_TURN_BURSTS));
        const started = performance.now();
        const chunks = await relayBurst(tokens.long)();
        relayed.chunksPerSecond.push((chunks * 1000) / (performance.now() - started));
        lastRan.set(side, performance.now());
        continue;
      }
      const run = side === "direct" ? direct : bridge;
      // The short turns' CPU per request over several bursts (SHORT_TURN_BURSTS); throughput from one long burst.
      const short = await measure(stack, side, run(tokens.short, SHORT_TURN_BURSTS), streams * SHORT_TURN_BURSTS);
      const long = await measure(stack, side, run(tokens.long), streams);
      (side === "direct" ? directReps : bridgeReps).push(derive(streams, tokens, short, long));
      lastRan.set(side, performance.now());
    }
  }
  const paired = directReps.map((d, i) => ({ d, b: bridgeReps[i] as ThroughputRep }));
  const ratio = (pick: (r: ThroughputRep) => number) => spreadOf(paired.map(({ d, b }) => pick(b) / pick(d)));
  return {
    streams,
    tokens,
    repetitions,
    direct: directReps,
    bridge: bridgeReps,
    throughputRatio: ratio((r) => r.long.chunksPerSecond),
    cpuPerChunkRatio: ratio((r) => r.cpuUsPerChunk),
    cpuPerRequestRatio: ratio((r) => r.cpuUsPerRequest),
    cpuLongRatio: ratio((r) => r.long.cpuMs / r.long.chunks),
    rewarmed,
    ...(relay === undefined
      ? {}
      : {
          relay: {
            ...relayed,
            ratio: spreadOf(
              relayed.chunksPerSecond.map((c, i) => c / (directReps[i] as ThroughputRep).long.chunksPerSecond),
            ),
          },
        }),
  };
}

/** A side idle this long before a reading is warmed again: serve's idle-memory delay, less a second's margin. */
const REWARM_AFTER_MS = IDLE_MS - 1_000;

/** The targets' margins over their floors. */
export const THROUGHPUT_TARGET = {
  /** bridge ÷ direct chunks/s ≥ the HTTP/2 relay's ratio − this, on the worst repetition. */
  underRelay: 0.03,
  /** serve's CPU per request ≤ this × the direct client's for the same whole turn. */
  cpuPerTurnFactor: 1.2,
};

/** CPU µs per request of a whole short turn (the short run's CPU ÷ its requests): what a request costs, chunks and all. */
export const cpuUsPerTurn = (r: ThroughputRep, streams: number) => perRequestOf(r.short, streams) * 1000;

/** Table and targets of scenario 5. */
export function throughputReport(
  t: ThroughputResult,
  floor?: HopFloorResult,
): { table: Table; targets: TargetResult[] } {
  const med = (reps: readonly ThroughputRep[], pick: (r: ThroughputRep) => number) => spreadOf(reps.map(pick));
  const per1000 = (s: ThroughputSide) => s.cpuMs / (s.chunks / 1000);
  const side = (name: string, reps: readonly ThroughputRep[]): Row => [
    name,
    fmtSpread(
      med(reps, (r) => r.long.chunksPerSecond),
      0,
    ),
    fmtSpread(
      med(reps, (r) => cpuUsPerTurn(r, t.streams)),
      0,
    ),
    fmtSpread(
      med(reps, (r) => r.cpuUsPerRequest),
      0,
    ),
    fmtSpread(
      med(reps, (r) => r.cpuUsPerChunk),
      1,
    ),
    fmt(med(reps, (r) => per1000(r.long)).median, 1),
    fmt(med(reps, (r) => r.long.loadGeneratorCpuMs / (r.long.chunks / 1000)).median, 1),
    fmt(med(reps, (r) => r.long.emulatorCpuMs / (r.long.chunks / 1000)).median, 1),
  ];
  const table: Table = {
    title: `5. Throughput and CPU: ${t.streams} concurrent streams × ${t.tokens.short} and × ${t.tokens.long} one-token text deltas, ${t.repetitions} repetitions`,
    header: [
      "",
      `chunks/s (${t.tokens.long}-token streams)`,
      `CPU µs / whole ${t.tokens.short}-token turn`,
      "CPU µs / request without chunks",
      "CPU µs / chunk",
      `CPU ms / 1k chunks at ${t.tokens.long}`,
      "load gen. ms / 1k",
      "emulator ms / 1k",
    ],
    rows: [side("direct connect-es client", t.direct), side("cursor-bridge serve", t.bridge)],
    notes: [
      "median (lowest–highest) of the repetitions; direct and bridge alternate which goes first",
      `whole turn = the ${t.tokens.short}-token runs' CPU ÷ their requests (${SHORT_TURN_BURSTS} bursts of ${t.streams} per reading, or one in records before 2026-11-27's evening; the CPU-per-request target); per chunk = slope of CPU between the ${t.tokens.short}- and ${t.tokens.long}-token runs; without chunks = the whole turn less its chunks at that slope`,
      "CPU: the direct client's is the load generator's while it runs only that client; serve's is its own process's (/proc/<pid>/stat, 10 ms ticks), without the SSE clients reading it",
      `bridge ÷ direct: throughput ${fmtSpread(t.throughputRatio, 2)}, CPU per chunk ${fmtSpread(t.cpuPerChunkRatio, 2)}, per request ${fmtSpread(t.cpuPerRequestRatio, 2)}, both at ${t.tokens.long} tokens ${fmtSpread(t.cpuLongRatio, 2)}`,
    ],
  };
  const chunkUs = (reps: readonly ThroughputRep[]) => fmt(med(reps, (r) => r.cpuUsPerChunk).median, 1);
  const requestUs = (reps: readonly ThroughputRep[]) => fmt(med(reps, (r) => r.cpuUsPerRequest).median, 0);
  const tcp = relayFigure("tcp", relayThroughput(floor, "tcp"), "ratio");
  // The relay run in the same repetitions (paired) when it was; else the hop floor's, measured before.
  const relayCpu = t.relay === undefined ? relayCpuPerTurn(floor, "h2") : spreadOf(t.relay.cpuUsPerTurn);
  const relayFloor =
    t.relay === undefined
      ? { floor: { name: "HTTP/2 relay ÷ direct", spread: relayThroughput(floor, "h2"), prefix: "×" }, paired: false }
      : {
          floor: { name: "HTTP/2 relay ÷ direct in the same repetitions", spread: t.relay.ratio, prefix: "×" },
          paired: true,
        };
  const targets: TargetResult[] = [
    floorTarget({
      scenario: "5. throughput",
      target: `bridge ÷ direct chunks/s ≥ HTTP/2 relay ratio − ${THROUGHPUT_TARGET.underRelay} at ${t.streams} streams (worst repetition)`,
      measured: t.throughputRatio,
      ...relayFloor,
      bound: { atLeast: minus(THROUGHPUT_TARGET.underRelay) },
      detail:
        `${fmt(med(t.bridge, (r) => r.long.chunksPerSecond).median, 0)} vs ${fmt(med(t.direct, (r) => r.long.chunksPerSecond).median, 0)} chunks/s` +
        (tcp === "" ? "" : `; beside it: ${tcp}`),
    }),
    floorTarget({
      scenario: "5. CPU per request",
      target: `serve's CPU per request ≤ ${THROUGHPUT_TARGET.cpuPerTurnFactor}× the direct client's for the same whole turn (${t.tokens.short} tokens, ${t.streams} streams)`,
      measured: spreadOf(t.bridge.map((r) => cpuUsPerTurn(r, t.streams))),
      floor: {
        name: "the direct client's whole turn",
        spread: spreadOf(t.direct.map((r) => cpuUsPerTurn(r, t.streams))),
        unit: " µs",
        digits: 0,
      },
      bound: { atMost: times(THROUGHPUT_TARGET.cpuPerTurnFactor) },
      paired: true,
      unit: " µs",
      digits: 0,
      detail:
        `fixed part without the chunks ${requestUs(t.bridge)} vs ${requestUs(t.direct)} µs` +
        (t.rewarmed === undefined ? "" : `; readings warmed again after an idle gap: ${t.rewarmed}`) +
        (relayCpu === undefined
          ? ""
          : `; beside it: the HTTP/2 relay process's own CPU per turn ${fmtSpread(relayCpu, 0)} µs (a process that only ends HTTP/2 on both sides)`),
    }),
    {
      ...spreadTarget(
        "5. CPU per chunk",
        `bridge ÷ direct CPU per chunk ≤ 1.0 at ${t.streams} streams`,
        t.cpuPerChunkRatio,
        { atMost: 1.0 },
        `${chunkUs(t.bridge)} vs ${chunkUs(t.direct)} µs/chunk`,
      ),
      floor: `the direct client's CPU per chunk, ${chunkUs(t.direct)} µs`,
    },
  ];
  return { table, targets };
}
