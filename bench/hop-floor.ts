/**
 * Scenario: the floor of one hop. The direct connect-es client talks to the emulator once straight and once through a
 * relay process (bench/relay-process.ts) that passes the HTTP/2 bytes through without parsing them, side by side in
 * one run, in the latency scenario's cases (1 stream, 1 request whose whole Run is timed, 200 streams) and the
 * throughput scenario's 200 streams of 100 tokens. No bridge can add less than the relay does: it is one more process
 * between client and Cursor, and nothing else. What the relay adds is what the targets of scenario 1 and 5 leave a
 * bridge's own work on this machine (e.g. a target of +1 ms at 1 stream, with a relay adding 0.8 ms, leaves 0.2 ms
 * to parse the request, call Cursor, translate and write the answer).
 */
import { fileURLToPath } from "node:url";
import { type BenchStack, newConversationId } from "./bench-stack.js";
import { forkChild } from "./child-ipc.js";
import { LATENCY_TOKENS, type LatencySettings, latencyCases } from "./latency.js";
import { compareSides, directSide, type OverheadResult, type OverheadSide, overheadTable, warmUp } from "./overhead.js";
import { createDirectClient, type DirectClient, RawBlobStore, runDirectTurn } from "./raw-driver.js";
import type { RelayReady } from "./relay-process.js";
import { fmt, fmtSpread, type Spread, spreadOf, type Table } from "./report.js";

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
  };
}

/** What the floor scenario measured. */
export interface HopFloorResult {
  relays: RelayFloor[];
}

/** The direct client through the relay (`client` is connected to it). */
function relaySide(client: DirectClient): OverheadSide {
  return {
    name: "relay",
    async request(prompt, stream) {
      const r = await runDirectTurn(client, {
        userText: prompt,
        conversationId: newConversationId(),
        model: "default",
        tools: [],
        blobs: new RawBlobStore(),
      });
      if (r.firstTextAt === undefined) throw new Error("relayed run produced no text");
      return { ttft: stream ? r.firstTextAt - r.startedAt : Number.NaN, total: r.endedAt - r.startedAt };
    },
  };
}

/** `streams` concurrent Runs of `tokens` text deltas each: the chunks per second they reached. */
async function chunksPerSecond(client: DirectClient, streams: number, tokens: number): Promise<number> {
  const prompt = `[[emu:tokens ${tokens}]] [[emu:rate 5000]]`;
  const started = performance.now();
  const counts = await Promise.all(
    Array.from({ length: streams }, async () => {
      const r = await runDirectTurn(client, {
        userText: prompt,
        conversationId: newConversationId(),
        model: "default",
        tools: [],
        blobs: new RawBlobStore(),
      });
      if (r.textDeltas !== tokens) throw new Error(`stream: ${r.textDeltas} of ${tokens} deltas`);
      return r.textDeltas;
    }),
  );
  return (counts.reduce((a, b) => a + b, 0) * 1000) / (performance.now() - started);
}

/** One relay against the direct client: the latency cases, then the throughput pairs. */
async function measureRelay(
  stack: BenchStack,
  kind: RelayKind,
  s: LatencySettings,
  throughputRepetitions: number,
): Promise<RelayFloor> {
  const entry = fileURLToPath(new URL("./relay-process.ts", import.meta.url));
  const relay = await forkChild<RelayReady>(entry, {
    BENCH_RELAY_UPSTREAM: stack.emulator.url,
    BENCH_RELAY_KIND: kind,
  });
  try {
    const client = createDirectClient(relay.ready.url, stack.emulator.accessToken);
    const baseline = directSide(stack);
    const candidate = relaySide(client);
    const cases = latencyCases(s).filter((c) => c.concurrency <= 200);
    await warmUp([baseline, candidate], cases[0]?.prompt ?? "", s.warmup * 20);
    const latency: OverheadResult[] = [];
    for (const c of cases) latency.push(await compareSides(baseline, candidate, c));
    const streams = 200;
    const tokens = 100;
    const direct: number[] = [];
    const relayed: number[] = [];
    await chunksPerSecond(stack.direct, streams, 10);
    await chunksPerSecond(client, streams, 10);
    for (let rep = 0; rep < throughputRepetitions; rep++) {
      const order = rep % 2 === 0 ? (["direct", "relay"] as const) : (["relay", "direct"] as const);
      for (const side of order) {
        if (side === "direct") direct.push(await chunksPerSecond(stack.direct, streams, tokens));
        else relayed.push(await chunksPerSecond(client, streams, tokens));
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
      },
    };
  } finally {
    await relay.close();
  }
}

/**
 * Runs the floor scenario on the stack's emulator, for the TCP relay and then the HTTP/2 relay: the latency cases up
 * to 200 streams (`s` sets their repetitions, as in scenario 1), then `throughputRepetitions` pairs of 200 × 100-token
 * runs in alternating order.
 */
export async function runHopFloor(
  stack: BenchStack,
  s: LatencySettings,
  throughputRepetitions: number,
  onRelay: (kind: RelayKind) => void = () => undefined,
): Promise<HopFloorResult> {
  const relays: RelayFloor[] = [];
  for (const kind of ["tcp", "h2"] as const) {
    onRelay(kind);
    relays.push(await measureRelay(stack, kind, s, throughputRepetitions));
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

/** The floor's tables, one per relay (no targets: they say what the targets of scenarios 1 and 5 leave a bridge). */
export function hopFloorReport(result: HopFloorResult): Table[] {
  return result.relays.map((floor) => relayTable(floor));
}

function relayTable(floor: RelayFloor): Table {
  const table = overheadTable(RELAY_TITLES[floor.kind], floor.latency, [
    RELAY_NOTES[floor.kind],
    `the same cases as scenario 1 (${LATENCY_TOKENS} tokens per reply); non-streaming: the whole Run, straight and relayed; added = relay − direct, ratio = relay ÷ direct, paired per repetition`,
  ]);
  const t = floor.throughput;
  const throughput =
    `throughput, ${t.streams} streams × ${t.tokens} tokens: direct ${fmt(spreadOf(t.direct).median, 0)} chunks/s, ` +
    `relay ${fmt(spreadOf(t.relay).median, 0)}; relay ÷ direct ${fmtSpread(t.ratio, 2)} over ${t.repetitions} reps`;
  return { ...table, notes: [...table.notes, throughput] };
}
