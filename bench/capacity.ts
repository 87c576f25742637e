/**
 * Scenarios 4 (memory per parked conversation) and 5 (throughput and CPU per chunk). Emulator, bridge and load
 * generator are three processes: memory is read in the bridge process, and CPU per process (over IPC), so the bridge's
 * CPU per chunk is its own, set against the direct client's (the load generator while it runs only that client).
 */
import type { BenchStack } from "./bench-stack.js";
import { newConversationId } from "./bench-stack.js";
import { RawBlobStore, runDirectTurn } from "./raw-driver.js";
import {
  fmt,
  fmtSpread,
  type LoadAverage,
  type Row,
  type Spread,
  spreadOf,
  type Table,
  type TargetResult,
} from "./report.js";
import { streamCompletion } from "./sse-client.js";
import { OPENAI_TOOLS } from "./workload.js";

/** Scenario 4 result. */
export interface MemoryResult {
  parked: number;
  heapBytesPerConversation: number;
  externalBytesPerConversation: number;
  /**
   * Resident set size of the bridge process per parked conversation, as a user sees it: no forced collection before
   * either reading (the baseline is read right after one, so the load's own garbage counts).
   */
  rssBytesPerConversation: number;
  /** The same after three forced full collections: the floor the process could get down to. */
  rssFloorBytesPerConversation: number;
  heapReleasedBytes: number;
  loadAverage?: LoadAverage;
}

async function inBatches(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += width) {
    await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, j) => task(start + j)));
  }
}

async function park(stack: BenchStack, i: number): Promise<void> {
  const content = `Check file ${i} [[emu:tool read {"filePath":"/repo/file-${i}.ts"}]]`;
  const r = await streamCompletion(stack.bridge.baseURL, {
    model: "auto",
    messages: [{ role: "user", content }],
    tools: OPENAI_TOOLS,
  });
  if (r.finishReason !== "tool_calls")
    throw new Error(`conversation ${i} did not park (finish_reason ${r.finishReason})`);
}

/** Scenario 4: heap and RSS growth of the bridge process with `count` conversations parked on a tool call. */
export async function runMemory(stack: BenchStack, count: number): Promise<MemoryResult> {
  const { parked } = stack.bridge;
  // Warm-up: first-use allocations (JIT, pools, sessions) must not be charged to the measured conversations.
  await inBatches(50, 25, (i) => park(stack, -1 - i));
  await parked.closeAll();
  const before = await stack.bridge.collectGarbage();
  await inBatches(count, 50, (i) => park(stack, i));
  const size = await parked.size();
  if (size !== count) throw new Error(`expected ${count} parked turns, found ${size}`);
  const raw = await stack.bridge.memoryUsage();
  const during = await stack.bridge.collectGarbage();
  await parked.closeAll();
  const after = await stack.bridge.collectGarbage();
  return {
    parked: count,
    heapBytesPerConversation: (during.heapUsed - before.heapUsed) / count,
    externalBytesPerConversation: (during.external - before.external) / count,
    rssBytesPerConversation: (raw.rss - before.rss) / count,
    rssFloorBytesPerConversation: (during.rss - before.rss) / count,
    heapReleasedBytes: during.heapUsed - after.heapUsed,
  };
}

/** One side of one repetition of scenario 5. */
export interface ThroughputSide {
  chunks: number;
  wallMs: number;
  chunksPerSecond: number;
  /**
   * CPU (user + system) per 1,000 chunks of the process doing this side's Cursor client work: the load generator for
   * the direct client, the bridge process for cursor-bridge.
   */
  cpuMsPer1000: number;
  /** CPU per 1,000 chunks of the load generator (for the bridge side: the SSE clients reading the streams). */
  loadGeneratorCpuMsPer1000: number;
  /** CPU of the emulator process per 1,000 chunks. */
  emulatorCpuMsPer1000: number;
}

/** Scenario 5 result. */
export interface ThroughputResult {
  streams: number;
  tokensPerStream: number;
  repetitions: number;
  direct: ThroughputSide[];
  bridge: ThroughputSide[];
  /** bridge ÷ direct chunks per second, per repetition. */
  throughputRatio: Spread;
  /** bridge process CPU ÷ direct client CPU per 1,000 chunks, per repetition. */
  cpuRatio: Spread;
  loadAverage?: LoadAverage;
}

const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / 1000;

async function measure(
  stack: BenchStack,
  side: "direct" | "bridge",
  work: () => Promise<number>,
): Promise<ThroughputSide> {
  const [bridgeCpu, emulatorCpu] = await Promise.all([stack.bridge.cpuUsage(), stack.emulator.cpuUsage()]);
  const ownCpu = process.cpuUsage();
  const started = performance.now();
  const chunks = await work();
  const wallMs = performance.now() - started;
  const ownUsed = cpuMs(ownCpu, process.cpuUsage());
  const [bridgeNow, emulatorNow] = await Promise.all([stack.bridge.cpuUsage(), stack.emulator.cpuUsage()]);
  const per1000 = (ms: number) => ms / (chunks / 1000);
  return {
    chunks,
    wallMs,
    chunksPerSecond: (chunks * 1000) / wallMs,
    cpuMsPer1000: per1000(side === "direct" ? ownUsed : cpuMs(bridgeCpu, bridgeNow)),
    loadGeneratorCpuMsPer1000: per1000(ownUsed),
    emulatorCpuMsPer1000: per1000(cpuMs(emulatorCpu, emulatorNow)),
  };
}

/**
 * Scenario 5: `streams` concurrent streams of `tokens` one-token text deltas each, direct and through the bridge, in
 * `repetitions` pairs whose order alternates (after one warm-up pair).
 */
export async function runThroughput(
  stack: BenchStack,
  streams: number,
  tokens: number,
  repetitions: number,
): Promise<ThroughputResult> {
  // A rate far above what 200 streams can reach on loopback: the pipeline, not the pacing, sets the pace.
  const prompt = (n: number) => `[[emu:tokens ${n}]] [[emu:rate 5000]]`;
  const all = (one: () => Promise<number>) => async () =>
    (await Promise.all(Array.from({ length: streams }, one))).reduce((a, b) => a + b, 0);
  const direct = (n: number) =>
    all(async () => {
      const r = await runDirectTurn(stack.direct, {
        userText: prompt(n),
        conversationId: newConversationId(),
        model: "default",
        tools: [],
        blobs: new RawBlobStore(),
      });
      if (r.textDeltas !== n) throw new Error(`direct stream: ${r.textDeltas} of ${n} deltas`);
      return r.textDeltas;
    });
  const bridge = (n: number) =>
    all(async () => {
      const r = await streamCompletion(stack.bridge.baseURL, {
        model: "auto",
        messages: [{ role: "user", content: prompt(n) }],
      });
      if (r.contentChunks !== n) throw new Error(`bridge stream: ${r.contentChunks} of ${n} chunks`);
      return r.contentChunks;
    });
  await direct(Math.min(tokens, 20))();
  await bridge(Math.min(tokens, 20))();
  const directSides: ThroughputSide[] = [];
  const bridgeSides: ThroughputSide[] = [];
  for (let rep = 0; rep < repetitions; rep++) {
    const order = rep % 2 === 0 ? (["direct", "bridge"] as const) : (["bridge", "direct"] as const);
    for (const side of order) {
      if (side === "direct") directSides.push(await measure(stack, "direct", direct(tokens)));
      else bridgeSides.push(await measure(stack, "bridge", bridge(tokens)));
    }
  }
  const paired = directSides.map((d, i) => ({ d, b: bridgeSides[i] as ThroughputSide }));
  return {
    streams,
    tokensPerStream: tokens,
    repetitions,
    direct: directSides,
    bridge: bridgeSides,
    throughputRatio: spreadOf(paired.map(({ d, b }) => b.chunksPerSecond / d.chunksPerSecond)),
    cpuRatio: spreadOf(paired.map(({ d, b }) => b.cpuMsPer1000 / d.cpuMsPer1000)),
  };
}

/** Tables and targets of scenarios 4 and 5. */
export function capacityReport(
  memory: MemoryResult | undefined,
  throughput: ThroughputResult | undefined,
): { tables: Table[]; targets: TargetResult[] } {
  const tables: Table[] = [];
  const targets: TargetResult[] = [];
  if (memory !== undefined) {
    const m = memoryReport(memory);
    tables.push(m.table);
    targets.push(m.target);
  }
  if (throughput !== undefined) {
    const t = throughputReport(throughput);
    tables.push(t.table);
    targets.push(...t.targets);
  }
  return { tables, targets };
}

function memoryReport(memory: MemoryResult): { table: Table; target: TargetResult } {
  const kb = (bytes: number) => fmt(bytes / 1024, 1);
  const memoryTable: Table = {
    title: `4. Memory with ${memory.parked} conversations parked on a tool call`,
    header: [
      "",
      "heap KB / conversation",
      "RSS KB / conversation",
      "RSS floor KB / conversation",
      "external KB / conversation",
      "heap MB released on close",
    ],
    rows: [
      [
        "cursor-bridge",
        kb(memory.heapBytesPerConversation),
        kb(memory.rssBytesPerConversation),
        kb(memory.rssFloorBytesPerConversation),
        kb(memory.externalBytesPerConversation),
        fmt(memory.heapReleasedBytes / 1024 / 1024, 1),
      ],
    ],
    notes: [
      "measured in the bridge process (its own process); RSS is what a user sees (no forced collection when read), the floor and heap are after 3× global.gc()",
    ],
  };
  const target: TargetResult = {
    scenario: "4. memory",
    target: "≤ 40 KB RSS per parked conversation (issue 17)",
    measured: `${kb(memory.rssBytesPerConversation)} KB RSS (floor after forced GC ${kb(memory.rssFloorBytesPerConversation)} KB, heap ${kb(memory.heapBytesPerConversation)} KB)`,
    met: memory.rssBytesPerConversation <= 40 * 1024,
  };
  return { table: memoryTable, target };
}

function throughputReport(t: ThroughputResult): { table: Table; targets: TargetResult[] } {
  const med = (sides: readonly ThroughputSide[], pick: (s: ThroughputSide) => number) => spreadOf(sides.map(pick));
  const side = (name: string, sides: readonly ThroughputSide[]): Row => [
    name,
    String(sides[0]?.chunks ?? 0),
    fmtSpread(
      med(sides, (s) => s.chunksPerSecond),
      0,
    ),
    fmtSpread(
      med(sides, (s) => s.cpuMsPer1000),
      1,
    ),
    fmt(med(sides, (s) => s.loadGeneratorCpuMsPer1000).median, 1),
    fmt(med(sides, (s) => s.emulatorCpuMsPer1000).median, 1),
  ];
  const throughputTable: Table = {
    title: `5. Throughput: ${t.streams} concurrent streams × ${t.tokensPerStream} one-token text deltas, ${t.repetitions} repetitions`,
    header: [
      "",
      "chunks",
      "chunks/s",
      "client CPU ms / 1k chunks",
      "load generator CPU ms / 1k",
      "emulator CPU ms / 1k",
    ],
    rows: [side("direct connect-es client", t.direct), side("cursor-bridge", t.bridge)],
    notes: [
      "median (lowest–highest) of the repetitions; direct and bridge alternate which goes first",
      "client CPU: the direct client's is the load generator's while it runs only that client; cursor-bridge's is its own process's (process.cpuUsage over IPC), without the SSE clients reading it",
      `bridge ÷ direct: throughput ${fmtSpread(t.throughputRatio, 2)}, CPU per chunk ${fmtSpread(t.cpuRatio, 2)}`,
    ],
  };
  const targets: TargetResult[] = [
    {
      scenario: "5. throughput",
      target: `bridge ÷ direct chunks/s ≥ 0.9 at ${t.streams} streams`,
      measured: fmtSpread(t.throughputRatio, 2),
      met: t.throughputRatio.median >= 0.9,
    },
    {
      scenario: "5. CPU per chunk",
      target: "bridge process ÷ direct client CPU per 1,000 chunks ≤ 1.2",
      measured: `${fmtSpread(t.cpuRatio, 2)} (${fmt(med(t.bridge, (s) => s.cpuMsPer1000).median, 1)} vs ${fmt(med(t.direct, (s) => s.cpuMsPer1000).median, 1)} ms)`,
      met: t.cpuRatio.median <= 1.2,
    },
  ];
  return { table: throughputTable, targets };
}
