/**
 * The latency cases of scenario 1 (bench/overhead.ts does the measuring) and their targets, serve against the direct
 * connect-es client on one emulator (bootstrap 0, so the comparison isolates the bridge):
 * - 1 stream and 1 non-streaming request at a time: the time the bridge adds (ms), p50 and p99; the target: TTFT added
 *   at 1 stream, p50, ≤ what the HTTP/2 relay of bench/hop-floor.ts adds (same run) + 0.3 ms;
 * - 200 and 1,000 concurrent streams: TTFT bridge ÷ direct; the targets: p50 at 200 ≤ the relay's ratio + 0.10, p99
 *   at 1,000 ≤ 1.5, and 0 failed requests at 1,000.
 *
 * Single requests use a fast reply (20 tokens at 500/s) so that enough of them fit in a run for a p99; the concurrent
 * cases pace their 20 tokens at the emulator's realistic 50/s.
 */
import { type BenchStack, startAnotherServe } from "./bench-stack.js";
import { type HopFloorResult, relayFigure, relayLatency } from "./hop-floor.js";
import {
  compareSides,
  directSide,
  type OverheadCase,
  type OverheadResult,
  type OverheadSide,
  overheadTable,
  serveSide,
  warmUp,
} from "./overhead.js";
import { fmt, spreadTarget, type Table, type TargetResult } from "./report.js";
import { type Floor, floorTarget, plus } from "./targets.js";

/** Repetitions and rounds of the latency cases (what `--quick` trims). */
export interface LatencySettings {
  repetitions: number;
  /** Sequential requests per side per repetition at 1 at a time. */
  singleRounds: number;
  /** Rounds per side per repetition at 200 streams. */
  rounds200: number;
  /** Repetitions at 1,000 streams (one round each). */
  repetitions1000: number;
  warmup: number;
  /** The non-streaming case (no target of its own: full runs show it; the quick run leaves it out). */
  nonStreaming?: boolean;
}

export const LATENCY_TOKENS = 20;
const SINGLE_PROMPT = `[[emu:tokens ${LATENCY_TOKENS}]] [[emu:rate 500]] overhead probe`;
const PACED_PROMPT = `[[emu:tokens ${LATENCY_TOKENS}]] overhead probe`;

/** The cases, in order. */
export function latencyCases(s: LatencySettings): OverheadCase[] {
  return [
    {
      label: "1 stream",
      concurrency: 1,
      stream: true,
      prompt: SINGLE_PROMPT,
      rounds: s.singleRounds,
      repetitions: s.repetitions,
    },
    ...(s.nonStreaming === false
      ? []
      : [
          {
            label: "1 request, non-streaming",
            concurrency: 1,
            stream: false,
            prompt: SINGLE_PROMPT,
            rounds: s.singleRounds,
            repetitions: s.repetitions,
          },
        ]),
    {
      label: "200 streams",
      concurrency: 200,
      stream: true,
      prompt: PACED_PROMPT,
      rounds: s.rounds200,
      repetitions: s.repetitions,
    },
    {
      label: "1,000 streams",
      concurrency: 1000,
      stream: true,
      prompt: PACED_PROMPT,
      rounds: 1,
      repetitions: s.repetitions1000,
    },
  ];
}

/** The cases whose targets are held against the HTTP/2 relay (1 and 200 streams): the floor side runs in them. */
export const heldAgainstRelay = (c: OverheadCase) => c.stream && c.concurrency <= 200;

/**
 * Runs `cases` with `baseline` against `candidate` (by default the direct client against the stack's serve), after a
 * warm-up of both. A later scenario (e.g. a gateway's keys on against keys off) passes two serve sides instead.
 * `floor` (the HTTP/2 relay, bench/hop-floor.ts) runs in the same rounds of the cases its targets are held against.
 */
export async function runLatency(
  stack: BenchStack,
  s: LatencySettings,
  cases: readonly OverheadCase[] = latencyCases(s),
  baseline: OverheadSide = directSide(stack),
  candidate: OverheadSide = serveSide(stack.bridge),
  onCase: (label: string) => void = () => undefined,
  floor?: OverheadSide,
): Promise<OverheadResult[]> {
  await warmUp(
    floor === undefined ? [baseline, candidate] : [baseline, candidate, floor],
    SINGLE_PROMPT,
    s.warmup * 20,
  );
  const results: OverheadResult[] = [];
  for (const c of cases) {
    onCase(c.label);
    results.push(await compareSides(baseline, candidate, c, heldAgainstRelay(c) ? floor : undefined));
  }
  return results;
}

/**
 * Two serves on the stack's emulator side by side, e.g. the team gateway (issue 29) with keys off (`baseline`) and on
 * (`candidate`): each gets its own `serveArgs` and the Bearer key its requests send. By default the single-request
 * cases (1 stream, 1 non-streaming request); report `added.ttftP50` / `added.totalP50` of the results against a
 * target with `spreadTarget` (e.g. `{ atMost: 0.2 }` ms).
 */
export async function compareServes(
  stack: BenchStack,
  s: LatencySettings,
  baseline: { name: string; serveArgs: readonly string[]; apiKey?: string },
  candidate: { name: string; serveArgs: readonly string[]; apiKey?: string },
  cases: readonly OverheadCase[] = latencyCases(s).filter((c) => c.concurrency === 1),
): Promise<OverheadResult[]> {
  const a = await startAnotherServe(stack, { serveArgs: baseline.serveArgs });
  try {
    const b = await startAnotherServe(stack, { serveArgs: candidate.serveArgs });
    try {
      return await runLatency(
        stack,
        s,
        cases,
        serveSide(a, baseline.name, baseline.apiKey),
        serveSide(b, candidate.name, candidate.apiKey),
      );
    } finally {
      await b.close();
    }
  } finally {
    await a.close();
  }
}

/** Margins over the HTTP/2 relay's floor (bench/targets.ts holds the targets they replaced). */
export const LATENCY_TARGET = {
  /** TTFT added at 1 stream, p50: ≤ the relay's addition + this (ms). */
  oneStreamOverFloorMs: 0.3,
  /** TTFT p50 ÷ direct at 200 streams: ≤ the relay's ratio + this. */
  ratio200OverFloor: 0.1,
  /** TTFT p99 ÷ direct at 1,000 streams (no relay runs 1,000 streams: the floor is the direct client itself). */
  ratio1000P99: 1.5,
};

/**
 * The table and the targets of the latency cases. The targets at 1 and 200 streams are held against the HTTP/2
 * relay of `floor` (bench/hop-floor.ts, same run); without it they say so and count as missed.
 */
export function latencyReport(
  results: readonly OverheadResult[],
  floor?: HopFloorResult,
): { table: Table; targets: TargetResult[] } {
  const table = overheadTable(
    "1. Latency: serve as shipped vs a direct connect-es client on the same emulator (ms)",
    results,
    [
      `emulator bootstrap 0 ms (isolates the bridge); ${LATENCY_TOKENS} text tokens per reply, at 500 tokens/s for single requests, 50/s for 200 and 1,000 streams`,
      "percentiles per repetition, then median (lowest–highest) over the repetitions; added = bridge − direct, ratio = bridge ÷ direct, paired per repetition",
      "non-streaming (full runs): total time of the whole JSON answer against the direct client's whole Run; errors = failed requests direct / bridge",
    ],
  );
  const targets: TargetResult[] = [];
  const byLabel = (label: string) => results.find((r) => r.label === label);
  const detail = (r: OverheadResult, m: "ttftP50" | "ttftP99", as: "added" | "ratio") => {
    const tcp = relayFigure("tcp", relayLatency(floor, "tcp", r.label, m, as), as);
    return (
      `${fmt(r.candidate[m].median, 2)} vs ${fmt(r.baseline[m].median, 2)} ms, ${r.samplesPerRepetition} per rep` +
      (tcp === "" ? "" : `; beside it: ${tcp}`)
    );
  };
  // The relay run in the same rounds (paired per repetition) when it was; else the hop floor's, measured after.
  const h2 = (r: OverheadResult, m: "ttftP50", as: "added" | "ratio"): { floor: Floor; paired: boolean } => {
    const name = `HTTP/2 relay ${as === "added" ? "adds" : "÷ direct"}`;
    const look = { prefix: as === "added" ? "+" : "×", unit: as === "added" ? " ms" : "" };
    return r.floor === undefined
      ? { floor: { name, spread: relayLatency(floor, "h2", r.label, m, as), ...look }, paired: false }
      : { floor: { name: `${name} in the same rounds`, spread: r.floor[as][m], ...look }, paired: true };
  };
  const one = byLabel("1 stream");
  if (one !== undefined) {
    targets.push(
      floorTarget({
        scenario: "1. TTFT",
        target: `added at 1 stream ≤ HTTP/2 relay floor + ${LATENCY_TARGET.oneStreamOverFloorMs} ms p50`,
        measured: one.added.ttftP50,
        ...h2(one, "ttftP50", "added"),
        bound: { atMost: plus(LATENCY_TARGET.oneStreamOverFloorMs) },
        detail: detail(one, "ttftP50", "added"),
        unit: " ms",
      }),
    );
  }
  const c200 = byLabel("200 streams");
  if (c200 !== undefined) {
    targets.push(
      floorTarget({
        scenario: "1. TTFT",
        target: `bridge ÷ direct p50 ≤ HTTP/2 relay ratio + ${LATENCY_TARGET.ratio200OverFloor.toFixed(2)} at 200 streams`,
        measured: c200.ratio.ttftP50,
        ...h2(c200, "ttftP50", "ratio"),
        bound: { atMost: plus(LATENCY_TARGET.ratio200OverFloor) },
        detail: detail(c200, "ttftP50", "ratio"),
      }),
    );
  }
  const c1000 = byLabel("1,000 streams");
  if (c1000 !== undefined) {
    targets.push(
      {
        scenario: "1. 1,000 streams",
        target: "0 failed requests through one serve",
        floor: `the direct client: ${c1000.errors.baseline} failed`,
        measured: `${c1000.errors.candidate} of ${c1000.samplesPerRepetition * c1000.repetitions}${c1000.errors.firstError === undefined ? "" : `; first: ${c1000.errors.firstError.slice(0, 160)}`}`,
        met: c1000.errors.candidate === 0,
      },
      {
        ...spreadTarget(
          "1. TTFT",
          `bridge ÷ direct p99 ≤ ${LATENCY_TARGET.ratio1000P99} at 1,000 streams`,
          c1000.ratio.ttftP99,
          { atMost: LATENCY_TARGET.ratio1000P99 },
          `${fmt(c1000.candidate.ttftP99.median, 2)} vs ${fmt(c1000.baseline.ttftP99.median, 2)} ms, ${c1000.samplesPerRepetition} per rep`,
        ),
        floor: `the direct client itself, ×1 (p99 ${fmt(c1000.baseline.ttftP99.median, 0)} ms; no relay runs 1,000 streams)`,
      },
    );
  }
  return { table, targets };
}
