/**
 * Scenario 4, memory per parked conversation: conversations parked on a client tool call (the Run stays open, waiting
 * for the result) in `serve` as shipped, at each count of `counts` (200 and 1,000), on the running stack's emulator.
 *
 * Fresh processes, each warmed up first with at least {@link WARM_UP} parked conversations (or held Runs), then batches
 * of them until V8's young generation is full ({@link warmUpUntilYoungFull}): JIT, pools, sessions, the store's first
 * use and the young generation's growth are not charged to the measured ones:
 * - raw: no forced collection at any point. RSS (/proc/<pid>/status) is read after the warm-up and a 500 ms pause,
 *   then right after the last conversation of each count parked. Growth ÷ conversations is what a user sees: it holds
 *   whatever garbage the parking left that V8 has not collected yet (the target is on this figure). Its only preload,
 *   bench/gc-hook.mjs without `--expose-gc`, answers the young generation's sizes at each reading and nothing else.
 * - direct: the connect-es client holding as many Runs open at their tool call in a process of its own, read as raw
 *   is: the floor the target holds raw against (raw ≤ direct, at each count). That process starts as serve does:
 *   bundled JavaScript under plain `node`, no tsx and no node options (bench/child-ipc.ts, forkBuiltChild).
 * - repetitions: raw and direct run `repetitions` times, alternating (a fresh serve, then a fresh direct client, …);
 *   each repetition of raw is held against the direct client's of the same repetition (paired), and each must meet it.
 * - floor: started with bench/gc-hook.mjs and `--expose-gc`; three forced full collections before the baseline and at
 *   each count. Growth ÷ conversations is what the process could get down to (heap growth beside it). Once per run.
 * - young generation: V8's new space of the raw serve and of the direct client (committed, and how much of it is
 *   resident, i.e. touched), at the baseline and at each count. V8 doubles it (up to two 16 MB semi-spaces) once
 *   enough bytes survived its scavenges, and keeps it; a committed page counts in RSS only once it is touched. Growth
 *   between the baseline and a count is inside that count's RSS figure; the table prints both sides' sizes.
 *   A warm-up of 50 left serve's 16 committed MB partly untouched (serve holds its young generation small while it
 *   starts, src/util/young-generation.ts); one of 100 left both sides at 16 MB, and both doubled to 32 MB within the
 *   first 50–100 conversations measured: 16 MB, about 82 KB of each conversation's figure at 200 and 16 KB at 1,000,
 *   on both sides, was that one-time growth (docs/performance.md). The warm-up now goes on until it is done.
 */
import { fileURLToPath } from "node:url";
import type { BenchStack } from "./bench-stack.js";
import { startAnotherServe } from "./bench-stack.js";
import { forkBuiltChild } from "./child-ipc.js";
import type { HolderReady } from "./holder-process.js";
import { fmt, fmtSpread, type LoadAverage, type Row, spreadOf, type Table, type TargetResult } from "./report.js";
import type { ServeProcess } from "./serve-process.js";
import { streamCompletion } from "./sse-client.js";
import { floorTarget } from "./targets.js";
import { OPENAI_TOOLS } from "./workload.js";

/** Conversations parked (Runs held) before the baseline, on both sides, at least. */
export const WARM_UP = 100;
const BATCH = 50;
/**
 * V8's largest young generation with Node's default flags on a 64-bit machine: two semi-spaces of 16 MB (committed
 * bytes). The warm-up goes on, a batch at a time, until the young generation is this large and all of it resident, so
 * that its one-time growth is not charged to the conversations measured after the baseline.
 */
export const YOUNG_GENERATION_FULL = 32 * 1024 * 1024;
/** The most conversations a warm-up parks (a young generation still not full then is left as it is, and shown). */
export const WARM_UP_MAX = 800;

/**
 * True once the young generation of a reading is at its largest and wholly resident, or when the reading has no sizes
 * (absent, or NaN from a process that could not read them, which arrives as `null` over IPC): the warm-up then stops
 * at its least, the same on either side.
 */
export function youngGenerationFull(reading: { newSpace?: number | null; newSpaceResident?: number | null }): boolean {
  const { newSpace, newSpaceResident } = reading;
  if (!Number.isFinite(newSpace) || !Number.isFinite(newSpaceResident)) return true;
  return (newSpace as number) >= YOUNG_GENERATION_FULL && (newSpaceResident as number) >= (newSpace as number);
}

/**
 * Parks `WARM_UP` conversations with `warmBatch` (each call parks the next BATCH), then more batches until the young
 * generation is full (`read`), at most `WARM_UP_MAX` in all; returns how many it parked.
 */
export async function warmUpUntilYoungFull(
  warmBatch: () => Promise<void>,
  read: () => Promise<{ newSpace?: number | null; newSpaceResident?: number | null }>,
): Promise<number> {
  let warmed = 0;
  while (warmed < WARM_UP) {
    await warmBatch();
    warmed += BATCH;
  }
  while (warmed < WARM_UP_MAX && !youngGenerationFull(await read())) {
    await warmBatch();
    warmed += BATCH;
  }
  return warmed;
}

/** One count's measurements (bytes per parked conversation). */
export interface ParkedAt {
  parked: number;
  /** The median over the repetitions (each repetition's value below). */
  rawRssBytesPerConversation: number;
  floorRssBytesPerConversation: number;
  floorHeapBytesPerConversation: number;
  /**
   * The direct client holding as many Runs open in a process of its own, no bridge (raw RSS, bench/holder-process.ts);
   * the target's floor. NaN when not measured.
   */
  directRawRssBytesPerConversation: number;
  /** Each repetition's raw and direct figures, in order (paired by index); absent in records before repetitions. */
  rawRssBytesPerConversationByRepetition?: number[];
  directRawRssBytesPerConversationByRepetition?: number[];
  /** V8's young generation (committed bytes) at this count: the raw serve's; the direct client's (first repetition). */
  serveYoungGenerationBytes?: number;
  directYoungGenerationBytes?: number;
  /** Each repetition's young generation at this count: committed and resident bytes. */
  serveYoung?: YoungState[];
  directYoung?: YoungState[];
}

/** V8's young generation at one reading (bytes): committed, and how much of it is resident. */
export interface YoungState {
  committed: number;
  resident: number;
}

/** Scenario 4 result. */
export interface ParkedMemoryResult {
  counts: ParkedAt[];
  /** Raw RSS of the raw process after its warm-up, and the floor process's after its first collection (MB). */
  rawBaselineMb: number;
  floorBaselineMb: number;
  /** NaN when the direct client's floor was not measured. */
  directBaselineMb: number;
  /** The young generations at the baselines (MB, first repetition; NaN when not measured). */
  serveYoungBaselineMb?: number;
  directYoungBaselineMb?: number;
  /** Each repetition's young generation at its baseline. */
  serveYoungBaseline?: YoungState[];
  directYoungBaseline?: YoungState[];
  /** Raw serve and direct client pairs measured (1 in records before repetitions). */
  repetitions?: number;
  /**
   * Conversations parked before the baseline (50 in records before 2026-11-27's change); since 2026-11-28 the least
   * of them: the warm-up goes on until the young generation is full (see `warmUps`).
   */
  warmUp?: number;
  /**
   * Conversations each repetition's warm-up parked, per side, and the post-GC serve's (NaN when it was not measured);
   * absent in records before 2026-11-28.
   */
  warmUps?: { raw: number[]; direct: number[]; floor?: number };
  loadAverage?: LoadAverage;
}

async function inBatches(from: number, to: number, task: (i: number) => Promise<void>): Promise<void> {
  for (let start = from; start < to; start += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, to - start) }, (_, j) => task(start + j)));
  }
}

function parker(serve: ServeProcess, tag: string): (i: number) => Promise<void> {
  return async (i) => {
    const content = `Check file ${tag}-${i} [[emu:tool read {"filePath":"/repo/${tag}/file-${i}.ts"}]]`;
    const r = await streamCompletion(serve.baseURL, {
      model: "auto",
      messages: [{ role: "user", content }],
      tools: OPENAI_TOOLS,
    });
    if (r.finishReason !== "tool_calls")
      throw new Error(`conversation ${tag}-${i} did not park (finish_reason ${r.finishReason})`);
  };
}

/** One reading of a process (bytes). */
interface Reading {
  rss: number;
  heapUsed?: number;
  newSpace?: number;
  newSpaceResident?: number;
}

/**
 * Warms up (until the young generation `read` reads is full: {@link warmUpUntilYoungFull}), then parks up to each count
 * in turn, calling `read` at each; returns the readings after the baseline's.
 */
async function parkAndRead(
  serve: ServeProcess,
  tag: string,
  counts: readonly number[],
  read: () => Promise<Reading>,
): Promise<Readings> {
  const park = parker(serve, tag);
  const warm = parker(serve, `${tag}-warm`);
  let warmed = 0;
  const warmUp = await warmUpUntilYoungFull(async () => {
    await inBatches(warmed, warmed + BATCH, warm);
    warmed += BATCH;
  }, read);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const baseline = await read();
  const at: Reading[] = [];
  let parked = 0;
  for (const count of counts) {
    await inBatches(parked, count, park);
    parked = count;
    at.push(await read());
  }
  return { baseline, at, warmUp };
}

/**
 * The floor under the raw figure: the direct client holding Runs open at their tool call in a process of its own
 * (bench/holder-process.ts, bundled and started with plain `node` as serve is), read as the raw serve is (after the
 * same warm-up and pause, no forced collection).
 */
async function holdDirect(stack: BenchStack, counts: readonly number[]): Promise<Readings> {
  const entry = fileURLToPath(new URL("./holder-process.ts", import.meta.url));
  const holder = await forkBuiltChild<HolderReady>(entry, {
    BENCH_HOLDER_UPSTREAM: stack.emulator.url,
    BENCH_HOLDER_TOKEN: stack.emulator.accessToken,
    BENCH_HOLDER_COUNTS: counts.join(","),
  });
  try {
    const read = async (): Promise<Reading> => ({
      rss: await holder.ask<number>("rss"),
      newSpace: await holder.ask<number>("young"),
      newSpaceResident: await holder.ask<number>("youngResident"),
    });
    const warmUp = await warmUpUntilYoungFull(() => holder.ask("warm"), read);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baseline = await read();
    const at: Reading[] = [];
    for (const _ of counts) {
      await holder.ask("next");
      at.push(await read());
    }
    return { baseline, at, warmUp };
  } finally {
    await holder.close();
  }
}

/** One process's readings, and how many conversations its warm-up parked. */
type Readings = { baseline: Reading; at: Reading[]; warmUp: number };
const NOT_MEASURED: Readings = { baseline: { rss: Number.NaN }, at: [], warmUp: Number.NaN };

/** Scenario 4 on `stack`'s emulator (its own serve is left alone). */
export async function runParkedMemory(
  stack: BenchStack,
  counts: readonly number[],
  /** Also the post-GC serve (full runs: it has no target; the quick run leaves it out). */
  postGc = true,
  log: (line: string) => void = () => undefined,
  /** Raw serve and direct client pairs, alternating. */
  repetitions = 1,
): Promise<ParkedMemoryResult> {
  const raws: Readings[] = [];
  const directs: Readings[] = [];
  for (let rep = 0; rep < repetitions; rep++) {
    const rawServe = await startAnotherServe(stack, { gcHook: "read" });
    try {
      raws.push(await parkAndRead(rawServe, `raw${rep}`, counts, () => rawServe.memoryUsage()));
    } finally {
      await rawServe.close();
    }
    // The target's floor: when it cannot be measured, the target says so and counts as missed.
    try {
      directs.push(await holdDirect(stack, counts));
    } catch (error) {
      directs.push(NOT_MEASURED);
      log(
        `  the direct client's parked floor failed (its targets count as missed): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  let floor = NOT_MEASURED;
  if (postGc) {
    const floorServe = await startAnotherServe(stack, { gcHook: "collect" });
    try {
      floor = await parkAndRead(floorServe, "floor", counts, () => floorServe.collectGarbage());
    } finally {
      await floorServe.close();
    }
  }
  const per = (now: number | undefined, base: number | undefined, n: number) =>
    now === undefined || base === undefined ? Number.NaN : (now - base) / n;
  const young = (r: Reading | undefined): YoungState => ({
    committed: r?.newSpace ?? Number.NaN,
    resident: r?.newSpaceResident ?? Number.NaN,
  });
  const first = (all: Readings[]) => all[0] ?? NOT_MEASURED;
  return {
    counts: counts.map((n, i) => {
      const raw = raws.map((r) => per(r.at[i]?.rss, r.baseline.rss, n));
      const direct = directs.map((d) => per(d.at[i]?.rss, d.baseline.rss, n));
      return {
        parked: n,
        rawRssBytesPerConversation: spreadOf(raw).median,
        floorRssBytesPerConversation: per(floor.at[i]?.rss, floor.baseline.rss, n),
        floorHeapBytesPerConversation: per(floor.at[i]?.heapUsed, floor.baseline.heapUsed, n),
        directRawRssBytesPerConversation: spreadOf(direct).median,
        rawRssBytesPerConversationByRepetition: raw,
        directRawRssBytesPerConversationByRepetition: direct,
        serveYoungGenerationBytes: first(raws).at[i]?.newSpace ?? Number.NaN,
        directYoungGenerationBytes: first(directs).at[i]?.newSpace ?? Number.NaN,
        serveYoung: raws.map((r) => young(r.at[i])),
        directYoung: directs.map((d) => young(d.at[i])),
      };
    }),
    rawBaselineMb: first(raws).baseline.rss / 1024 / 1024,
    floorBaselineMb: floor.baseline.rss / 1024 / 1024,
    directBaselineMb: first(directs).baseline.rss / 1024 / 1024,
    serveYoungBaselineMb: (first(raws).baseline.newSpace ?? Number.NaN) / 1024 / 1024,
    directYoungBaselineMb: (first(directs).baseline.newSpace ?? Number.NaN) / 1024 / 1024,
    serveYoungBaseline: raws.map((r) => young(r.baseline)),
    directYoungBaseline: directs.map((d) => young(d.baseline)),
    repetitions,
    warmUp: WARM_UP,
    warmUps: { raw: raws.map((r) => r.warmUp), direct: directs.map((d) => d.warmUp), floor: floor.warmUp },
  };
}

/**
 * One side's young generation, baseline → count, in MB: `16 (15 resident) → 32 (32)` per repetition (", " between
 * them); records before the resident size was read give `16 → 32`.
 */
function youngText(
  baseline: readonly YoungState[] | undefined,
  at: readonly YoungState[] | undefined,
  baselineMb: number | undefined,
  atBytes: number | undefined,
): string {
  const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 0);
  if (baseline === undefined || at === undefined || baseline.length === 0) {
    return `${fmt(baselineMb ?? Number.NaN, 0)} → ${mb(atBytes ?? Number.NaN)}`;
  }
  return baseline
    .map((b, i) => {
      const a = at[i] ?? { committed: Number.NaN, resident: Number.NaN };
      return `${mb(b.committed)} (${mb(b.resident)} resident) → ${mb(a.committed)} (${mb(a.resident)})`;
    })
    .join(", ");
}

/** Table and targets of scenario 4. */
export function parkedMemoryReport(r: ParkedMemoryResult): { table: Table; targets: TargetResult[] } {
  const kb = (bytes: number) => fmt(bytes / 1024, 1);
  const reps = r.repetitions ?? 1;
  const serveYoung = (c: ParkedAt) =>
    youngText(r.serveYoungBaseline, c.serveYoung, r.serveYoungBaselineMb, c.serveYoungGenerationBytes);
  const directYoung = (c: ParkedAt) =>
    youngText(r.directYoungBaseline, c.directYoung, r.directYoungBaselineMb, c.directYoungGenerationBytes);
  const spreadKb = (values: readonly number[]) =>
    values.length === 1 ? kb(values[0] as number) : fmtSpread(spreadOf(values.map((v) => v / 1024)), 1);
  const rawValues = (c: ParkedAt) => c.rawRssBytesPerConversationByRepetition ?? [c.rawRssBytesPerConversation];
  const directValues = (c: ParkedAt) =>
    c.directRawRssBytesPerConversationByRepetition ?? [c.directRawRssBytesPerConversation];
  const table: Table = {
    title: "4. Memory per conversation parked on a tool call (serve as shipped, file store)",
    header: [
      "parked",
      reps === 1 ? "raw RSS KB / conversation" : `raw RSS KB / conversation, median (min–max) of ${reps}`,
      "post-GC RSS floor KB / conversation",
      "post-GC heap KB / conv.",
      reps === 1 ? "direct client, raw RSS KB / Run held" : `direct client, raw RSS KB / Run held, of ${reps}`,
      "young generation MB, baseline → this count: serve; direct",
    ],
    rows: r.counts.map(
      (c): Row => [
        String(c.parked),
        spreadKb(rawValues(c)),
        kb(c.floorRssBytesPerConversation),
        kb(c.floorHeapBytesPerConversation),
        spreadKb(directValues(c)),
        `${serveYoung(c)}; ${directYoung(c)}`,
      ],
    ),
    notes: [
      `raw: RSS growth from /proc with no forced collection (baseline ${fmt(r.rawBaselineMb, 0)} MB after ${r.warmUps === undefined ? `${r.warmUp ?? 50} warm-up conversations` : "the warm-up"}), read right after the last one parked: what a user sees`,
      ...(r.warmUps === undefined
        ? []
        : [
            `warm-up: at least ${r.warmUp} conversations on each side, then batches of ${BATCH} until V8's young generation is full (${YOUNG_GENERATION_FULL / 1024 / 1024} MB committed, all of it resident; at most ${WARM_UP_MAX}), so that its one-time growth is not charged to the conversations measured: the same rule on both sides, not the same count: raw ${r.warmUps.raw.join(", ")}; direct ${r.warmUps.direct.join(", ")}${typeof r.warmUps.floor === "number" && Number.isFinite(r.warmUps.floor) ? `; post-GC ${r.warmUps.floor}` : ""}. V8 may still give some of it back inside a window (resident below committed at a count: the young generation column), which lowers that count's figure`,
          ]),
      `post-GC (full runs): a second serve with bench/gc-hook.mjs preloaded, 3 forced full GCs before each reading (baseline ${fmt(r.floorBaselineMb, 0)} MB)`,
      `direct client (the target's floor): no bridge; the connect-es client in a process of its own, bundled and started with plain node as serve is, holds as many Runs open at their tool call, read as raw is (baseline ${fmt(r.directBaselineMb, 0)} MB): what keeping a Cursor turn open costs before any bridge state`,
      ...(reps === 1
        ? []
        : [
            `repetitions: ${reps} pairs of a fresh raw serve and a fresh direct client, alternating; each raw repetition is held against the direct client's of the same pair`,
          ]),
      "young generation: V8's new space, committed (and resident, i.e. touched), of the raw serve and of the direct client, at their baselines and at each count. V8 grows it once under load and keeps it; growth between a baseline and a count (records before 2026-11-28: 16 → 32 MB on both sides, about 82 KB of each conversation's figure at 200) is a one-time cost inside that count's RSS figure, ÷ 200 it weighs five times what it weighs ÷ 1,000",
    ],
  };
  const targets = r.counts.map((c): TargetResult => {
    const raw = rawValues(c);
    const direct = directValues(c);
    return floorTarget({
      scenario: "4. parked memory",
      target: `raw RSS per conversation ≤ the direct client's own per Run held, at ${c.parked.toLocaleString("en")} parked`,
      measured: spreadOf(raw.map((v) => v / 1024)),
      floor: {
        name: "the direct client holding Runs open",
        spread: spreadOf(direct.map((v) => v / 1024)),
        unit: " KB",
        digits: 1,
      },
      bound: { atMost: (floor) => floor },
      // Each raw serve against the direct client measured right after it (same pair), when there are several.
      paired: raw.length > 1 && raw.length === direct.length,
      unit: " KB",
      digits: 1,
      // The post-GC serve runs in full runs only; the young generations whenever they were read.
      detail: [
        Number.isFinite(c.floorRssBytesPerConversation)
          ? `post-GC ${kb(c.floorRssBytesPerConversation)} KB, heap ${kb(c.floorHeapBytesPerConversation)} KB`
          : "",
        Number.isFinite(c.serveYoungGenerationBytes ?? Number.NaN) ||
        Number.isFinite(c.directYoungGenerationBytes ?? Number.NaN)
          ? `young generation serve ${serveYoung(c)} MB, direct ${directYoung(c)} MB`
          : "",
      ]
        .filter((part) => part !== "")
        .join("; "),
    });
  });
  return { table, targets };
}
