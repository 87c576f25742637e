/**
 * Scenario 1, overhead: the same streamed completion through cursor-bridge (its own process) and through the direct
 * connect-es client (the load generator's process), at several concurrencies. Each repetition runs whole rounds of
 * `concurrency` simultaneous streams per side; rounds alternate which side goes first, so neither always runs on a
 * warmer or calmer machine. Reported per repetition: TTFT (first non-empty text) and total time, p50/p99 per side and
 * the ratio bridge ÷ direct; across repetitions: the median and the spread (lowest–highest).
 */
import { type BenchStack, newConversationId } from "./bench-stack.js";
import { RawBlobStore, runDirectTurn } from "./raw-driver.js";
import {
  fmt,
  fmtSpread,
  type LoadAverage,
  percentile,
  type Row,
  type Spread,
  spreadOf,
  type Table,
  type TargetResult,
  withLoadAverage,
} from "./report.js";
import { streamCompletion } from "./sse-client.js";

/** Settings of the overhead scenario. */
export interface OverheadSettings {
  concurrencies: readonly number[];
  /** Rounds per side in one repetition at this concurrency. */
  rounds: (concurrency: number) => number;
  repetitions: number;
  tokens: number;
  warmup: number;
}

/** Percentiles of one side in one repetition (ms). */
interface Percentiles {
  ttftP50: number;
  ttftP99: number;
  totalP50: number;
  totalP99: number;
}

type Metric = keyof Percentiles;
const METRICS: readonly Metric[] = ["ttftP50", "ttftP99", "totalP50", "totalP99"];

/** Measurements at one concurrency. */
export interface OverheadResult {
  concurrency: number;
  repetitions: number;
  /** Streams per side in each repetition. */
  samplesPerRepetition: number;
  direct: Record<Metric, Spread>;
  bridge: Record<Metric, Spread>;
  /** bridge ÷ direct, per repetition. */
  ratio: Record<Metric, Spread>;
  /** bridge − direct (ms), per repetition. */
  added: Record<Metric, Spread>;
  loadAverage: LoadAverage;
}

interface Sample {
  ttft: number;
  total: number;
}

async function directSample(stack: BenchStack, prompt: string): Promise<Sample> {
  const r = await runDirectTurn(stack.direct, {
    userText: prompt,
    conversationId: newConversationId(),
    model: "default",
    tools: [],
    blobs: new RawBlobStore(),
  });
  if (r.firstTextAt === undefined) throw new Error("direct run produced no text");
  return { ttft: r.firstTextAt - r.startedAt, total: r.endedAt - r.startedAt };
}

async function bridgeSample(stack: BenchStack, prompt: string): Promise<Sample> {
  const r = await streamCompletion(stack.bridge.baseURL, {
    model: "auto",
    messages: [{ role: "user", content: prompt }],
  });
  if (r.firstContentAt === undefined) throw new Error("bridge stream produced no text");
  return { ttft: r.firstContentAt - r.startedAt, total: r.endedAt - r.startedAt };
}

function percentiles(samples: readonly Sample[]): Percentiles {
  const ttft = samples.map((s) => s.ttft);
  const total = samples.map((s) => s.total);
  return {
    ttftP50: percentile(ttft, 50),
    ttftP99: percentile(ttft, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
  };
}

function perMetric(reps: readonly Percentiles[], value: (p: Percentiles, m: Metric) => number): Record<Metric, Spread> {
  return Object.fromEntries(METRICS.map((m) => [m, spreadOf(reps.map((p) => value(p, m)))])) as Record<Metric, Spread>;
}

/** Runs the scenario. */
export async function runOverhead(stack: BenchStack, settings: OverheadSettings): Promise<OverheadResult[]> {
  const prompt = `[[emu:tokens ${settings.tokens}]] overhead probe`;
  const batch = (concurrency: number, run: typeof directSample) =>
    Promise.all(Array.from({ length: concurrency }, () => run(stack, prompt)));
  for (let i = 0; i < settings.warmup; i++) {
    await batch(20, directSample);
    await batch(20, bridgeSample);
  }
  const results: OverheadResult[] = [];
  let round = 0;
  for (const concurrency of settings.concurrencies) {
    const { result, loadAverage } = await withLoadAverage(async () => {
      const directReps: Percentiles[] = [];
      const bridgeReps: Percentiles[] = [];
      for (let rep = 0; rep < settings.repetitions; rep++) {
        const direct: Sample[] = [];
        const bridge: Sample[] = [];
        for (let r = 0; r < settings.rounds(concurrency); r++, round++) {
          // Alternate which side goes first so neither always runs on a warmer machine.
          const sides = round % 2 === 0 ? (["direct", "bridge"] as const) : (["bridge", "direct"] as const);
          for (const side of sides) {
            if (side === "direct") direct.push(...(await batch(concurrency, directSample)));
            else bridge.push(...(await batch(concurrency, bridgeSample)));
          }
        }
        directReps.push(percentiles(direct));
        bridgeReps.push(percentiles(bridge));
      }
      const paired = directReps.map((d, i) => ({ d, b: bridgeReps[i] as Percentiles }));
      return {
        direct: perMetric(directReps, (p, m) => p[m]),
        bridge: perMetric(bridgeReps, (p, m) => p[m]),
        ratio: Object.fromEntries(METRICS.map((m) => [m, spreadOf(paired.map(({ d, b }) => b[m] / d[m]))])) as Record<
          Metric,
          Spread
        >,
        added: Object.fromEntries(METRICS.map((m) => [m, spreadOf(paired.map(({ d, b }) => b[m] - d[m]))])) as Record<
          Metric,
          Spread
        >,
      };
    });
    results.push({
      concurrency,
      repetitions: settings.repetitions,
      samplesPerRepetition: concurrency * settings.rounds(concurrency),
      ...result,
      loadAverage,
    });
  }
  return results;
}

/** The printed table. */
export function overheadTable(results: readonly OverheadResult[], notes: string[]): Table {
  const header: Row = [
    "streams",
    "reps × n",
    "TTFT p50 direct / bridge",
    "TTFT p99 direct / bridge",
    "TTFT ratio p50",
    "TTFT ratio p99",
    "total p50 direct / bridge",
    "total ratio p99",
    "load avg",
  ];
  const pair = (a: Spread, b: Spread) => `${fmt(a.median)} / ${fmt(b.median)}`;
  const rows = results.map(
    (r): Row => [
      String(r.concurrency),
      `${r.repetitions} × ${r.samplesPerRepetition}`,
      pair(r.direct.ttftP50, r.bridge.ttftP50),
      pair(r.direct.ttftP99, r.bridge.ttftP99),
      fmtSpread(r.ratio.ttftP50, 2),
      fmtSpread(r.ratio.ttftP99, 2),
      pair(r.direct.totalP50, r.bridge.totalP50),
      fmtSpread(r.ratio.totalP99, 2),
      fmt(r.loadAverage.after[0] ?? Number.NaN, 2),
    ],
  );
  return {
    title: "1. Time to first token and total time, bridge vs a direct connect-es client (ms)",
    header,
    rows,
    notes,
  };
}

/** Targets at the highest concurrency: TTFT bridge ÷ direct ≤ 1.3 at p50 and ≤ 1.5 at p99 (median of repetitions). */
export function overheadTargets(results: readonly OverheadResult[]): TargetResult[] {
  const top = results.at(-1);
  if (top === undefined) return [];
  const at = `${top.concurrency} concurrent streams`;
  return [
    {
      scenario: "1. TTFT",
      target: `bridge ÷ direct p50 ≤ 1.3 at ${at}`,
      measured: `${fmtSpread(top.ratio.ttftP50, 2)} (${fmt(top.bridge.ttftP50.median)} vs ${fmt(top.direct.ttftP50.median)} ms)`,
      met: top.ratio.ttftP50.median <= 1.3,
    },
    {
      scenario: "1. TTFT",
      target: `bridge ÷ direct p99 ≤ 1.5 at ${at}`,
      measured: `${fmtSpread(top.ratio.ttftP99, 2)} (${fmt(top.bridge.ttftP99.median)} vs ${fmt(top.direct.ttftP99.median)} ms)`,
      met: top.ratio.ttftP99.median <= 1.5,
    },
  ];
}
