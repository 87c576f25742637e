/**
 * Scenario 1, overhead: the same completion through two sides, side by side in one run: a baseline and a candidate.
 * Today the baseline is the direct connect-es client (the physical limit) and the candidate `serve` as shipped; the
 * same code compares two serves (e.g. the team gateway with keys on against keys off: `serveSide` of a serve started
 * with other `serveArgs`, see bench/bench-stack.ts startAnotherServe).
 *
 * Each repetition runs whole rounds of `concurrency` simultaneous requests per side; rounds alternate which side goes
 * first, so neither always runs on a warmer or calmer machine. Per repetition: TTFT (first non-empty text) and total
 * time, p50/p99 per side, the ratio candidate ÷ baseline and the difference candidate − baseline; across repetitions:
 * the median and the spread (lowest–highest). Failed requests are counted, not thrown (1,000 streams must show 0).
 */
import type { BenchStack } from "./bench-stack.js";
import { type DirectClient, runPromptTurn } from "./raw-driver.js";
import {
  fmt,
  fmtSpread,
  type LoadAverage,
  percentile,
  type Row,
  type Spread,
  spreadOf,
  type Table,
  withLoadAverage,
} from "./report.js";
import type { ServeProcess } from "./serve-process.js";
import { completeOnce, streamCompletion } from "./sse-client.js";

/** One request's timings (ms from its start). TTFT is NaN for a non-streaming request. */
export interface Sample {
  ttft: number;
  total: number;
}

/** One side of the comparison. */
export interface OverheadSide {
  name: string;
  /** One request: streamed, or (`stream: false`) answered whole. */
  request(prompt: string, stream: boolean): Promise<Sample>;
}

/**
 * A connect-es client as a side: a Run driven to its end (it has no non-streaming mode: the whole Run is the
 * answer). `name` says which (the direct client, or one connected through a relay: bench/hop-floor.ts).
 */
export function clientSide(name: string, client: DirectClient): OverheadSide {
  return {
    name,
    async request(prompt, stream) {
      const r = await runPromptTurn(client, prompt);
      if (r.firstTextAt === undefined) throw new Error(`${name} run produced no text`);
      return { ttft: stream ? r.firstTextAt - r.startedAt : Number.NaN, total: r.endedAt - r.startedAt };
    },
  };
}

/** The direct connect-es client on the stack's emulator. */
export function directSide(stack: BenchStack): OverheadSide {
  return clientSide("direct", stack.direct);
}

/** `serve` over HTTP: `/v1/chat/completions`, streamed (SSE) or not, sending `apiKey` as the Bearer token. */
export function serveSide(serve: ServeProcess, name = "bridge", apiKey = "bench"): OverheadSide {
  return {
    name,
    async request(prompt, stream) {
      const body = { model: "auto", messages: [{ role: "user", content: prompt }] };
      if (!stream) {
        const r = await completeOnce(serve.baseURL, body, apiKey);
        return { ttft: Number.NaN, total: r.endedAt - r.startedAt };
      }
      const r = await streamCompletion(serve.baseURL, body, apiKey);
      if (r.firstContentAt === undefined) throw new Error(`${name} stream produced no text`);
      return { ttft: r.firstContentAt - r.startedAt, total: r.endedAt - r.startedAt };
    },
  };
}

/** One comparison: a concurrency, a prompt and how many rounds per repetition. */
export interface OverheadCase {
  /** Row label, e.g. "1 stream" or "1 request, non-streaming". */
  label: string;
  concurrency: number;
  stream: boolean;
  prompt: string;
  rounds: number;
  repetitions: number;
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

/** Measurements of one case. */
export interface OverheadResult {
  label: string;
  concurrency: number;
  stream: boolean;
  repetitions: number;
  /** Requests per side in each repetition. */
  samplesPerRepetition: number;
  baselineName: string;
  candidateName: string;
  baseline: Record<Metric, Spread>;
  candidate: Record<Metric, Spread>;
  /** candidate ÷ baseline, per repetition. */
  ratio: Record<Metric, Spread>;
  /** candidate − baseline (ms), per repetition. */
  added: Record<Metric, Spread>;
  /** Failed requests per side over all repetitions. */
  errors: { baseline: number; candidate: number; firstError?: string };
  /**
   * A third side run in the same rounds as the other two (the HTTP/2 relay that scenario 1's targets are held
   * against), against the baseline, paired per repetition: a floor measured under the same load as the candidate.
   */
  floor?: FloorSideResult;
  loadAverage: LoadAverage;
}

/** What the floor side of {@link compareSides} added over the baseline. */
export interface FloorSideResult {
  name: string;
  /** floor − baseline (ms), per repetition. */
  added: Record<Metric, Spread>;
  /** floor ÷ baseline, per repetition. */
  ratio: Record<Metric, Spread>;
  /** Failed requests of the floor side over all repetitions. */
  errors: number;
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

const perMetric = (reps: readonly Percentiles[], value: (p: Percentiles, m: Metric) => number) =>
  Object.fromEntries(METRICS.map((m) => [m, spreadOf(reps.map((p) => value(p, m)))])) as Record<Metric, Spread>;

/** Warms both sides up (JIT, connections, the store's first writes): `requests` streams each, 20 at a time. */
export async function warmUp(sides: readonly OverheadSide[], prompt: string, requests: number): Promise<void> {
  for (let done = 0; done < requests; done += 20) {
    for (const side of sides) await Promise.all(Array.from({ length: 20 }, () => side.request(prompt, true)));
  }
}

/**
 * Runs one case, baseline against candidate, and `floor` (when given) in the same rounds: each round runs every side
 * once, one after the other, the side that starts rotating from round to round.
 */
export async function compareSides(
  baseline: OverheadSide,
  candidate: OverheadSide,
  c: OverheadCase,
  floor?: OverheadSide,
): Promise<OverheadResult> {
  const errors: OverheadResult["errors"] = { baseline: 0, candidate: 0 };
  let floorErrors = 0;
  type Key = "baseline" | "candidate" | "floor";
  const batch = async (side: OverheadSide, key: Key): Promise<Sample[]> => {
    const settled = await Promise.allSettled(
      Array.from({ length: c.concurrency }, () => side.request(c.prompt, c.stream)),
    );
    const ok: Sample[] = [];
    for (const s of settled) {
      if (s.status === "fulfilled") ok.push(s.value);
      else {
        if (key === "floor") floorErrors++;
        else errors[key]++;
        errors.firstError ??= `${side.name}: ${s.reason instanceof Error ? s.reason.message : String(s.reason)}`;
      }
    }
    return ok;
  };
  const sides: [Key, OverheadSide][] = [
    ["baseline", baseline],
    ["candidate", candidate],
  ];
  if (floor !== undefined) sides.push(["floor", floor]);
  const { result, loadAverage } = await withLoadAverage(async () => {
    // Concurrent cases start with one unmeasured round per side at their concurrency: the cases before ran one
    // request at a time, and a process's first rounds at 200 or 1,000 streams pay for growing its heap and young
    // generation (serve's first two repetitions at 200 streams were its slowest in the record of 2026-11-28 12:06).
    if (c.concurrency > 1) for (const [key, side] of sides) await batch(side, key);
    const reps: Record<Key, Percentiles[]> = { baseline: [], candidate: [], floor: [] };
    let round = 0;
    for (let rep = 0; rep < c.repetitions; rep++) {
      const samples: Record<Key, Sample[]> = { baseline: [], candidate: [], floor: [] };
      for (let r = 0; r < c.rounds; r++, round++) {
        // Rotate which side goes first so none always runs on a warmer machine.
        for (let i = 0; i < sides.length; i++) {
          const [key, side] = sides[(round + i) % sides.length] as [Key, OverheadSide];
          samples[key].push(...(await batch(side, key)));
        }
      }
      for (const [key] of sides) reps[key].push(percentiles(samples[key]));
    }
    const against = (other: readonly Percentiles[]) => {
      const paired = reps.baseline.map((b, i) => ({ b, k: other[i] as Percentiles }));
      const each = (f: (k: number, b: number) => number) =>
        Object.fromEntries(METRICS.map((m) => [m, spreadOf(paired.map(({ b, k }) => f(k[m], b[m])))])) as Record<
          Metric,
          Spread
        >;
      return { ratio: each((k, b) => k / b), added: each((k, b) => k - b) };
    };
    return {
      baseline: perMetric(reps.baseline, (p, m) => p[m]),
      candidate: perMetric(reps.candidate, (p, m) => p[m]),
      ...against(reps.candidate),
      ...(floor === undefined ? {} : { floor: { name: floor.name, ...against(reps.floor), errors: floorErrors } }),
    };
  });
  return {
    label: c.label,
    concurrency: c.concurrency,
    stream: c.stream,
    repetitions: c.repetitions,
    samplesPerRepetition: c.concurrency * c.rounds,
    baselineName: baseline.name,
    candidateName: candidate.name,
    ...result,
    errors,
    loadAverage,
  };
}

/** The printed table of several cases (ms). */
export function overheadTable(title: string, results: readonly OverheadResult[], notes: string[]): Table {
  const first = results[0];
  const names = first === undefined ? "" : `${first.baselineName} / ${first.candidateName}`;
  const header: Row = [
    "case",
    "reps × n",
    `TTFT p50 ${names}`,
    `TTFT p99 ${names}`,
    "TTFT p50 added",
    "TTFT ratio p50",
    "TTFT ratio p99",
    `total p50 ${names}`,
    "total p50 added",
    "errors",
    "load avg",
  ];
  const pair = (a: Spread, b: Spread) => `${fmt(a.median)} / ${fmt(b.median)}`;
  const rows = results.map(
    (r): Row => [
      r.label,
      `${r.repetitions} × ${r.samplesPerRepetition}`,
      r.stream ? pair(r.baseline.ttftP50, r.candidate.ttftP50) : "–",
      r.stream ? pair(r.baseline.ttftP99, r.candidate.ttftP99) : "–",
      r.stream ? fmtSpread(r.added.ttftP50, 2) : "–",
      r.stream ? fmtSpread(r.ratio.ttftP50, 2) : "–",
      r.stream ? fmtSpread(r.ratio.ttftP99, 2) : "–",
      pair(r.baseline.totalP50, r.candidate.totalP50),
      fmtSpread(r.added.totalP50, 2),
      `${r.errors.baseline} / ${r.errors.candidate}`,
      fmt(r.loadAverage.after[0] ?? Number.NaN, 2),
    ],
  );
  const errorNote = results.find((r) => r.errors.firstError !== undefined)?.errors.firstError;
  return {
    title,
    header,
    rows,
    notes: errorNote === undefined ? notes : [...notes, `first error: ${errorNote}`],
  };
}
