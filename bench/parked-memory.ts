/**
 * Scenario 4, memory per parked conversation: conversations parked on a client tool call (the Run stays open, waiting
 * for the result) in `serve` as shipped, at each count of `counts` (200 and 1,000), on the running stack's emulator.
 *
 * Two fresh serve processes, one after the other, each warmed up with 50 parked conversations first (JIT, pools,
 * sessions and the store's first use are not charged to the measured ones):
 * - raw: no forced collection at any point. RSS (/proc/<pid>/status) is read after the warm-up and a 500 ms pause,
 *   then right after the last conversation of each count parked. Growth ÷ conversations is what a user sees: it holds
 *   whatever garbage the parking left that V8 has not collected yet (the target is on this figure). Its only preload,
 *   bench/gc-hook.mjs without `--expose-gc`, answers the young generation's size at each reading and nothing else.
 * - direct: the connect-es client holding as many Runs open at their tool call in a process of its own, read as raw
 *   is: the floor the target holds raw against (raw ≤ direct, at each count). That process starts as serve does:
 *   bundled JavaScript under plain `node`, no tsx and no node options (bench/child-ipc.ts, forkBuiltChild).
 * - floor: started with bench/gc-hook.mjs and `--expose-gc`; three forced full collections before the baseline and at
 *   each count. Growth ÷ conversations is what the process could get down to (heap growth beside it).
 * - young generation: V8's new space (committed) of the raw serve and of the direct client, at the baseline and at
 *   each count. V8 doubles it (up to two 16 MB semi-spaces) once enough bytes survived its scavenges, and keeps it.
 *   When it grows between the baseline and a count, that growth is inside the RSS figure of that count; the table
 *   prints both sides' sizes at the baseline and at each count beside the figures.
 */
import { fileURLToPath } from "node:url";
import type { BenchStack } from "./bench-stack.js";
import { startAnotherServe } from "./bench-stack.js";
import { forkBuiltChild } from "./child-ipc.js";
import type { HolderReady } from "./holder-process.js";
import { fmt, type LoadAverage, type Row, spreadOf, type Table, type TargetResult } from "./report.js";
import type { ServeProcess } from "./serve-process.js";
import { streamCompletion } from "./sse-client.js";
import { floorTarget } from "./targets.js";
import { OPENAI_TOOLS } from "./workload.js";

const WARM_UP = 50;
const BATCH = 50;

/** One count's measurements (bytes per parked conversation). */
export interface ParkedAt {
  parked: number;
  rawRssBytesPerConversation: number;
  floorRssBytesPerConversation: number;
  floorHeapBytesPerConversation: number;
  /**
   * The direct client holding as many Runs open in a process of its own, no bridge (raw RSS, bench/holder-process.ts);
   * the target's floor. NaN when not measured.
   */
  directRawRssBytesPerConversation: number;
  /** V8's young generation (committed bytes) at this count: the raw serve's; the direct client's. */
  serveYoungGenerationBytes?: number;
  directYoungGenerationBytes?: number;
}

/** Scenario 4 result. */
export interface ParkedMemoryResult {
  counts: ParkedAt[];
  /** Raw RSS of the raw process after its warm-up, and the floor process's after its first collection (MB). */
  rawBaselineMb: number;
  floorBaselineMb: number;
  /** NaN when the direct client's floor was not measured. */
  directBaselineMb: number;
  /** The young generations at the baselines (MB; NaN when not measured). */
  serveYoungBaselineMb?: number;
  directYoungBaselineMb?: number;
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
}

/** Parks up to each count in turn, calling `read` at each; returns the readings after the baseline's. */
async function parkAndRead(
  serve: ServeProcess,
  tag: string,
  counts: readonly number[],
  read: () => Promise<Reading>,
): Promise<{ baseline: Reading; at: Reading[] }> {
  const park = parker(serve, tag);
  await inBatches(-WARM_UP, 0, park);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const baseline = await read();
  const at: Reading[] = [];
  let parked = 0;
  for (const count of counts) {
    await inBatches(parked, count, park);
    parked = count;
    at.push(await read());
  }
  return { baseline, at };
}

/**
 * The floor under the raw figure: the direct client holding Runs open at their tool call in a process of its own
 * (bench/holder-process.ts, bundled and started with plain `node` as serve is), read as the raw serve is (after the
 * same warm-up and pause, no forced collection).
 */
async function holdDirect(stack: BenchStack, counts: readonly number[]): Promise<{ baseline: Reading; at: Reading[] }> {
  const entry = fileURLToPath(new URL("./holder-process.ts", import.meta.url));
  const holder = await forkBuiltChild<HolderReady>(entry, {
    BENCH_HOLDER_UPSTREAM: stack.emulator.url,
    BENCH_HOLDER_TOKEN: stack.emulator.accessToken,
    BENCH_HOLDER_COUNTS: counts.join(","),
  });
  try {
    await holder.ask("warm");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const read = async (): Promise<Reading> => ({
      rss: await holder.ask<number>("rss"),
      newSpace: await holder.ask<number>("young"),
    });
    const baseline = await read();
    const at: Reading[] = [];
    for (const _ of counts) {
      await holder.ask("next");
      at.push(await read());
    }
    return { baseline, at };
  } finally {
    await holder.close();
  }
}

/** Scenario 4 on `stack`'s emulator (its own serve is left alone). */
export async function runParkedMemory(
  stack: BenchStack,
  counts: readonly number[],
  /** Also the post-GC serve (full runs: it has no target; the quick run leaves it out). */
  postGc = true,
  log: (line: string) => void = () => undefined,
): Promise<ParkedMemoryResult> {
  const rawServe = await startAnotherServe(stack, { gcHook: "read" });
  let raw: Awaited<ReturnType<typeof parkAndRead>>;
  try {
    raw = await parkAndRead(rawServe, "raw", counts, () => rawServe.memoryUsage());
  } finally {
    await rawServe.close();
  }
  let floor: Awaited<ReturnType<typeof parkAndRead>> = { baseline: { rss: Number.NaN }, at: [] };
  if (postGc) {
    const floorServe = await startAnotherServe(stack, { gcHook: "collect" });
    try {
      floor = await parkAndRead(floorServe, "floor", counts, () => floorServe.collectGarbage());
    } finally {
      await floorServe.close();
    }
  }
  // The target's floor: when it cannot be measured, the target says so and counts as missed.
  let direct: Awaited<ReturnType<typeof holdDirect>> = { baseline: { rss: Number.NaN }, at: [] };
  try {
    direct = await holdDirect(stack, counts);
  } catch (error) {
    log(
      `  the direct client's parked floor failed (its targets count as missed): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const per = (now: number | undefined, base: number | undefined, n: number) =>
    now === undefined || base === undefined ? Number.NaN : (now - base) / n;
  return {
    counts: counts.map((n, i) => ({
      parked: n,
      rawRssBytesPerConversation: per(raw.at[i]?.rss, raw.baseline.rss, n),
      floorRssBytesPerConversation: per(floor.at[i]?.rss, floor.baseline.rss, n),
      floorHeapBytesPerConversation: per(floor.at[i]?.heapUsed, floor.baseline.heapUsed, n),
      directRawRssBytesPerConversation: per(direct.at[i]?.rss, direct.baseline.rss, n),
      serveYoungGenerationBytes: raw.at[i]?.newSpace ?? Number.NaN,
      directYoungGenerationBytes: direct.at[i]?.newSpace ?? Number.NaN,
    })),
    rawBaselineMb: raw.baseline.rss / 1024 / 1024,
    floorBaselineMb: floor.baseline.rss / 1024 / 1024,
    directBaselineMb: direct.baseline.rss / 1024 / 1024,
    serveYoungBaselineMb: (raw.baseline.newSpace ?? Number.NaN) / 1024 / 1024,
    directYoungBaselineMb: (direct.baseline.newSpace ?? Number.NaN) / 1024 / 1024,
  };
}

/** Table and targets of scenario 4. */
export function parkedMemoryReport(r: ParkedMemoryResult): { table: Table; targets: TargetResult[] } {
  const kb = (bytes: number) => fmt(bytes / 1024, 1);
  const mb = (bytes: number | undefined) => fmt((bytes ?? Number.NaN) / 1024 / 1024, 0);
  const table: Table = {
    title: "4. Memory per conversation parked on a tool call (serve as shipped, file store)",
    header: [
      "parked",
      "raw RSS KB / conversation",
      "post-GC RSS floor KB / conversation",
      "post-GC heap KB / conv.",
      "direct client, raw RSS KB / Run held",
      "young generation MB, baseline → this count: serve; direct",
    ],
    rows: r.counts.map(
      (c): Row => [
        String(c.parked),
        kb(c.rawRssBytesPerConversation),
        kb(c.floorRssBytesPerConversation),
        kb(c.floorHeapBytesPerConversation),
        kb(c.directRawRssBytesPerConversation),
        `${fmt(r.serveYoungBaselineMb ?? Number.NaN, 0)} → ${mb(c.serveYoungGenerationBytes)}; ${fmt(r.directYoungBaselineMb ?? Number.NaN, 0)} → ${mb(c.directYoungGenerationBytes)}`,
      ],
    ),
    notes: [
      `raw: RSS growth from /proc with no forced collection (baseline ${fmt(r.rawBaselineMb, 0)} MB after ${WARM_UP} warm-up conversations), read right after the last one parked: what a user sees`,
      `post-GC (full runs): a second serve with bench/gc-hook.mjs preloaded, 3 forced full GCs before each reading (baseline ${fmt(r.floorBaselineMb, 0)} MB)`,
      `direct client (the target's floor): no bridge; the connect-es client in a process of its own, bundled and started with plain node as serve is, holds as many Runs open at their tool call, read as raw is (baseline ${fmt(r.directBaselineMb, 0)} MB): what keeping a Cursor turn open costs before any bridge state`,
      `young generation: V8's new space, committed, of the raw serve and of the direct client, at their baselines and at each count. V8 grows it once under load and keeps it; growth between a baseline and a count is a one-time cost inside that count's RSS figure, ÷ 200 it weighs five times what it weighs ÷ 1,000`,
    ],
  };
  const targets = r.counts.map(
    (c): TargetResult =>
      floorTarget({
        scenario: "4. parked memory",
        target: `raw RSS per conversation ≤ the direct client's own per Run held, at ${c.parked.toLocaleString("en")} parked`,
        measured: spreadOf([c.rawRssBytesPerConversation / 1024]),
        floor: {
          name: "the direct client holding Runs open",
          spread: spreadOf([c.directRawRssBytesPerConversation / 1024]),
          unit: " KB",
          digits: 1,
        },
        bound: { atMost: (direct) => direct },
        unit: " KB",
        digits: 1,
        // The post-GC serve runs in full runs only; the young generations whenever they were read.
        detail: [
          Number.isFinite(c.floorRssBytesPerConversation)
            ? `post-GC ${kb(c.floorRssBytesPerConversation)} KB, heap ${kb(c.floorHeapBytesPerConversation)} KB`
            : "",
          Number.isFinite(c.serveYoungGenerationBytes ?? Number.NaN) ||
          Number.isFinite(c.directYoungGenerationBytes ?? Number.NaN)
            ? `young generation serve ${fmt(r.serveYoungBaselineMb ?? Number.NaN, 0)} → ${mb(c.serveYoungGenerationBytes)} MB, direct ${fmt(r.directYoungBaselineMb ?? Number.NaN, 0)} → ${mb(c.directYoungGenerationBytes)} MB`
            : "",
        ]
          .filter((part) => part !== "")
          .join("; "),
      }),
  );
  return { table, targets };
}
