/**
 * Scenario: the floor of one hop. The direct connect-es client talks to the emulator once straight and once through a
 * relay process (bench/relay-process.ts), side by side in one run, in the latency scenario's cases up to 200 streams
 * and in 200 streams of 100 tokens for throughput; through a TCP relay (bytes only: no bridge can add less, it is one
 * more process between client and Cursor and nothing else) and through an HTTP/2 relay (streams ended and reopened,
 * no message parsed). What the HTTP/2 relay adds is the floor the targets of scenarios 1 and 5 are held against
 * (bench/targets.ts: e.g. TTFT at 1 stream ≤ that floor + 0.3 ms): the latency and throughput scenarios run it in the
 * same rounds as serve ({@link startRelay}), so each repetition is held against the floor measured under its own
 * load. This scenario measures both relays on their own, in every case up to 200 streams, for its tables (full runs
 * and `--only=floor`).
 */
import { fileURLToPath } from "node:url";
import type { BenchStack } from "./bench-stack.js";
import { forkChild } from "./child-ipc.js";
import {
  clientSide,
  compareSides,
  directSide,
  type OverheadCase,
  type OverheadResult,
  type OverheadSide,
  overheadTable,
  warmUp,
} from "./overhead.js";
import { createDirectClient, type DirectClient, runConcurrentPromptTurns } from "./raw-driver.js";
import type { RelayReady } from "./relay-process.js";
import { fmt, fmtSpread, type Spread, spreadOf, type Table } from "./report.js";
import { inBursts, SHORT_TURN_BURSTS, throughputPrompt } from "./workload.js";

/** The relays: a TCP byte pipe (the floor of any process in between) and an HTTP/2 stream relay. */
export type RelayKind = "tcp" | "h2";

/** What one relay added. */
export interface RelayFloor {
  kind: RelayKind;
  latency: OverheadResult[];
  throughput: {
    streams: number;
    tokens: number;
    repetitions: number;
    /** Chunks per second, per repetition. */
    direct: number[];
    relay: number[];
    /** relay ÷ direct, per repetition. */
    ratio: Spread;
    /**
     * The relay process's own CPU (all threads, `process.cpuUsage()`) per whole 10-token turn of 200 concurrent
     * streams (SHORT_TURN_BURSTS bursts), per repetition: what ending HTTP/2 on both sides costs a process in between, before any translation
     * (scenario 5's CPU-per-request target quotes it beside its floor). Empty when not measured.
     */
    relayCpuUsPerTurn?: number[];
  };
}

/** What the floor scenario measured. */
export interface HopFloorResult {
  relays: RelayFloor[];
}

/** `streams` concurrent Runs of `tokens` text deltas each: the chunks per second they reached. */
async function chunksPerSecond(client: DirectClient, streams: number, tokens: number): Promise<number> {
  const started = performance.now();
  const chunks = await runConcurrentPromptTurns(client, streams, throughputPrompt(tokens), tokens);
  return (chunks * 1000) / (performance.now() - started);
}

/** The relay's CPU µs (user + system, all threads) while `run` runs. */
async function relayCpuUs(relay: { ask<T>(type: string): Promise<T> }, run: () => Promise<unknown>): Promise<number> {
  const before = await relay.ask<NodeJS.CpuUsage>("cpu");
  await run();
  const after = await relay.ask<NodeJS.CpuUsage>("cpu");
  return after.user - before.user + (after.system - before.system);
}

/** A relay process started on the stack's emulator, and the direct client connected through it. */
export interface RunningRelay {
  kind: RelayKind;
  client: DirectClient;
  /** The client through the relay, as a side of scenario 1 (bench/overhead.ts). */
  side: OverheadSide;
  /** The relay process's own CPU µs (user + system, all threads) while `run` runs. */
  cpuUs(run: () => Promise<unknown>): Promise<number>;
  close(): Promise<void>;
}

/** Starts `kind`'s relay process in front of the stack's emulator. */
export async function startRelay(stack: BenchStack, kind: RelayKind): Promise<RunningRelay> {
  const entry = fileURLToPath(new URL("./relay-process.ts", import.meta.url));
  const relay = await forkChild<RelayReady>(entry, {
    BENCH_RELAY_UPSTREAM: stack.emulator.url,
    BENCH_RELAY_KIND: kind,
  });
  const client = createDirectClient(relay.ready.url, stack.emulator.accessToken);
  return {
    kind,
    client,
    side: clientSide(`${kind === "h2" ? "HTTP/2" : "TCP"} relay`, client),
    cpuUs: (run) => relayCpuUs(relay, run),
    close: () => relay.close(),
  };
}

/** One relay against the direct client: the latency cases, then the throughput pairs (none for 0 repetitions). */
async function measureRelay(
  stack: BenchStack,
  kind: RelayKind,
  cases: readonly OverheadCase[],
  warmUpRequests: number,
  throughputRepetitions: number,
): Promise<RelayFloor> {
  const relay = await startRelay(stack, kind);
  try {
    const { client } = relay;
    const baseline = directSide(stack);
    const candidate = relay.side;
    // The throughput pairs warm up on their own (one 10-token run per side), so only latency cases need this.
    if (cases[0] !== undefined) await warmUp([baseline, candidate], cases[0].prompt, warmUpRequests);
    const latency: OverheadResult[] = [];
    for (const c of cases) latency.push(await compareSides(baseline, candidate, c));
    const streams = 200;
    const tokens = 100;
    const direct: number[] = [];
    const relayed: number[] = [];
    const relayCpuUsPerTurn: number[] = [];
    if (throughputRepetitions > 0) {
      await chunksPerSecond(stack.direct, streams, 10);
      await chunksPerSecond(client, streams, 10);
    }
    for (let rep = 0; rep < throughputRepetitions; rep++) {
      const order = rep % 2 === 0 ? (["direct", "relay"] as const) : (["relay", "direct"] as const);
      for (const side of order) {
        if (side === "direct") direct.push(await chunksPerSecond(stack.direct, streams, tokens));
        else {
          // The whole short turn first, as scenario 5 counts serve's CPU per request (10 tokens, 200 streams).
          const cpuUs = await relay.cpuUs(() =>
            inBursts(SHORT_TURN_BURSTS, () => runConcurrentPromptTurns(client, streams, throughputPrompt(10), 10)),
          );
          relayCpuUsPerTurn.push(cpuUs / (streams * SHORT_TURN_BURSTS));
          relayed.push(await chunksPerSecond(client, streams, tokens));
        }
      }
    }
    return {
      kind,
      latency,
      throughput: {
        streams,
        tokens,
        repetitions: throughputRepetitions,
        direct,
        relay: relayed,
        ratio: spreadOf(relayed.map((r, i) => r / (direct[i] as number))),
        relayCpuUsPerTurn,
      },
    };
  } finally {
    await relay.close();
  }
}

/**
 * Runs the floor scenario on the stack's emulator, for each of `kinds` in turn (the TCP relay, then the HTTP/2 relay,
 * by default): the latency `cases` (after `warmUpRequests` streams per side), then `throughputRepetitions` pairs of
 * 200 × 100-token runs in alternating order.
 */
export async function runHopFloor(
  stack: BenchStack,
  cases: readonly OverheadCase[],
  warmUpRequests: number,
  throughputRepetitions: number,
  onRelay: (kind: RelayKind) => void = () => undefined,
  kinds: readonly RelayKind[] = ["tcp", "h2"],
): Promise<HopFloorResult> {
  const relays: RelayFloor[] = [];
  for (const kind of kinds) {
    onRelay(kind);
    relays.push(await measureRelay(stack, kind, cases, warmUpRequests, throughputRepetitions));
  }
  return { relays };
}

const RELAY_TITLES: Record<RelayKind, string> = {
  tcp: "1b. Floor of one hop: the direct client straight vs through a TCP relay (a process piping bytes) (ms)",
  h2: "1c. Floor of one hop over HTTP/2: the direct client straight vs through an HTTP/2 relay that parses no message (ms)",
};

const RELAY_NOTES: Record<RelayKind, string> = {
  tcp: "the relay pipes each connection's bytes to the emulator and back: one more process between client and Cursor, and nothing else; no bridge adds less",
  h2: "the relay ends each HTTP/2 stream and opens one to the emulator on a shared session, piping the bodies: what ending HTTP on both sides costs before any translation",
};

/** What `kind`'s relay added in `label`'s latency case, as an addition (ms) or a ratio; undefined when not measured. */
export function relayLatency(
  floor: HopFloorResult | undefined,
  kind: RelayKind,
  label: string,
  metric: "ttftP50" | "ttftP99" | "totalP50",
  as: "added" | "ratio",
): Spread | undefined {
  return floor?.relays.find((r) => r.kind === kind)?.latency.find((r) => r.label === label)?.[as][metric];
}

/** `kind`'s relay ÷ direct throughput ratio; undefined when not measured. */
export function relayThroughput(floor: HopFloorResult | undefined, kind: RelayKind): Spread | undefined {
  const t = floor?.relays.find((r) => r.kind === kind)?.throughput;
  return t === undefined || t.repetitions === 0 ? undefined : t.ratio;
}

/** `kind`'s relay process's own CPU µs per whole 10-token turn at 200 streams; undefined when not measured. */
export function relayCpuPerTurn(floor: HopFloorResult | undefined, kind: RelayKind): Spread | undefined {
  const cpu = floor?.relays.find((r) => r.kind === kind)?.throughput.relayCpuUsPerTurn;
  return cpu === undefined || cpu.length === 0 ? undefined : spreadOf(cpu);
}

/** `kind`'s figure for a target line's details ("TCP relay +0.89 (0.68–1.00)"), or "" when not measured. */
export function relayFigure(kind: RelayKind, spread: Spread | undefined, as: "added" | "ratio"): string {
  return spread === undefined ? "" : `${RELAY_NAMES[kind]} ${as === "added" ? "+" : "×"}${fmtSpread(spread, 2)}`;
}

export const RELAY_NAMES: Record<RelayKind, string> = { tcp: "TCP relay", h2: "HTTP/2 relay" };

/** The floor's tables, one per relay (no targets of their own: the targets of scenarios 1 and 5 quote them). */
export function hopFloorReport(result: HopFloorResult): Table[] {
  return result.relays.map((floor) => relayTable(floor));
}

function relayTable(floor: RelayFloor): Table {
  const t = floor.throughput;
  if (floor.latency.length === 0) {
    // Only the throughput pairs were measured (the floor of the throughput target alone).
    return {
      title: RELAY_TITLES[floor.kind].replace(" (ms)", ": throughput"),
      header: ["", "direct chunks/s", "relay chunks/s", "relay ÷ direct"],
      rows: [
        [
          `${t.streams} streams × ${t.tokens} tokens, ${t.repetitions} reps`,
          fmtSpread(spreadOf(t.direct), 0),
          fmtSpread(spreadOf(t.relay), 0),
          fmtSpread(t.ratio, 2),
        ],
      ],
      notes: [RELAY_NOTES[floor.kind]],
    };
  }
  const table = overheadTable(RELAY_TITLES[floor.kind], floor.latency, [
    RELAY_NOTES[floor.kind],
    `the cases of scenario 1 up to 200 streams; non-streaming: the whole Run, straight and relayed; added = relay − direct, ratio = relay ÷ direct, paired per repetition`,
  ]);
  if (t.repetitions === 0) return table;
  const throughput =
    `throughput, ${t.streams} streams × ${t.tokens} tokens: direct ${fmt(spreadOf(t.direct).median, 0)} chunks/s, ` +
    `relay ${fmt(spreadOf(t.relay).median, 0)}; relay ÷ direct ${fmtSpread(t.ratio, 2)} over ${t.repetitions} reps` +
    (t.relayCpuUsPerTurn?.length
      ? `; the relay's own CPU per whole 10-token turn ${fmtSpread(spreadOf(t.relayCpuUsPerTurn), 0)} µs`
      : "");
  return { ...table, notes: [...table.notes, throughput] };
}
