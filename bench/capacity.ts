/**
 * Scenarios 4 (memory per parked conversation) and 5 (throughput and CPU per chunk). The emulator lives in another
 * process, so heap and CPU measured here are cursor-bridge's plus the load-generating clients'.
 */
import type { BenchStack } from "./bench-stack.js";
import { newConversationId } from "./bench-stack.js";
import { RawBlobStore, runDirectTurn } from "./raw-driver.js";
import { fmt, type Table, type TargetResult } from "./report.js";
import { streamCompletion } from "./sse-client.js";
import { OPENAI_TOOLS } from "./workload.js";

/** Scenario 4 result. */
export interface MemoryResult {
  parked: number;
  heapBytesPerConversation: number;
  /** RSS growth of this process per parked conversation (after the same GCs). */
  rssBytesPerConversation: number;
  externalBytesPerConversation: number;
  heapReleasedBytes: number;
}

async function collectGarbage(): Promise<NodeJS.MemoryUsage> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error("run with node --expose-gc (bench/run.ts re-executes itself with it)");
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage();
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

/** Scenario 4: heap growth with `count` conversations parked on a tool call. */
export async function runMemory(stack: BenchStack, count: number): Promise<MemoryResult> {
  const parked = stack.bridge.parked;
  // Warm-up: first-use allocations (JIT, pools, sessions) must not be charged to the measured conversations.
  await inBatches(50, 25, (i) => park(stack, -1 - i));
  await parked.closeAll();
  const before = await collectGarbage();
  await inBatches(count, 50, (i) => park(stack, i));
  if (parked.size() !== count) throw new Error(`expected ${count} parked turns, found ${parked.size()}`);
  const during = await collectGarbage();
  await parked.closeAll();
  const after = await collectGarbage();
  return {
    parked: count,
    heapBytesPerConversation: (during.heapUsed - before.heapUsed) / count,
    rssBytesPerConversation: (during.rss - before.rss) / count,
    externalBytesPerConversation: (during.external - before.external) / count,
    heapReleasedBytes: during.heapUsed - after.heapUsed,
  };
}

/** One side of scenario 5. */
export interface ThroughputSide {
  chunks: number;
  wallMs: number;
  chunksPerSecond: number;
  /** CPU (user + system) of this process per 1,000 chunks. */
  cpuMsPer1000: number;
  /** CPU of the emulator process per 1,000 chunks. */
  emulatorCpuMsPer1000: number;
}

/** Scenario 5 result. */
export interface ThroughputResult {
  streams: number;
  tokensPerStream: number;
  direct: ThroughputSide;
  bridge: ThroughputSide;
}

async function measure(stack: BenchStack, work: () => Promise<number>): Promise<ThroughputSide> {
  const cpu = process.cpuUsage();
  const emulatorCpu = await stack.emulator.cpuUsage();
  const started = performance.now();
  const chunks = await work();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const emulatorNow = await stack.emulator.cpuUsage();
  const emulatorUsed = emulatorNow.user + emulatorNow.system - emulatorCpu.user - emulatorCpu.system;
  return {
    chunks,
    wallMs,
    chunksPerSecond: (chunks * 1000) / wallMs,
    cpuMsPer1000: (used.user + used.system) / 1000 / (chunks / 1000),
    emulatorCpuMsPer1000: emulatorUsed / 1000 / (chunks / 1000),
  };
}

/** Scenario 5: `streams` concurrent streams of `tokens` one-token text deltas each, direct and through the bridge. */
export async function runThroughput(stack: BenchStack, streams: number, tokens: number): Promise<ThroughputResult> {
  // A rate far above what 200 streams can reach on loopback: the pipeline, not the pacing, sets the pace.
  const prompt = `[[emu:tokens ${tokens}]] [[emu:rate 5000]]`;
  const all = (one: () => Promise<number>) => async () =>
    (await Promise.all(Array.from({ length: streams }, one))).reduce((a, b) => a + b, 0);
  const direct = await measure(
    stack,
    all(async () => {
      const r = await runDirectTurn(stack.direct, {
        userText: prompt,
        conversationId: newConversationId(),
        model: "default",
        tools: [],
        blobs: new RawBlobStore(),
      });
      return r.textDeltas;
    }),
  );
  const bridge = await measure(
    stack,
    all(async () => {
      const r = await streamCompletion(stack.bridge.baseURL, {
        model: "auto",
        messages: [{ role: "user", content: prompt }],
      });
      return r.contentChunks;
    }),
  );
  return { streams, tokensPerStream: tokens, direct, bridge };
}

/** Tables and targets of scenarios 4 and 5. */
export function capacityReport(
  memory: MemoryResult,
  throughput: ThroughputResult,
): { tables: Table[]; targets: TargetResult[] } {
  const kb = (bytes: number) => fmt(bytes / 1024, 1);
  const memoryTable: Table = {
    title: `4. Memory with ${memory.parked} conversations parked on a tool call`,
    header: [
      "",
      "RSS KB / conversation",
      "heap KB / conversation",
      "external KB / conversation",
      "heap MB released on close",
    ],
    rows: [
      [
        "cursor-bridge",
        kb(memory.rssBytesPerConversation),
        kb(memory.heapBytesPerConversation),
        kb(memory.externalBytesPerConversation),
        fmt(memory.heapReleasedBytes / 1024 / 1024, 1),
      ],
    ],
    notes: ["heapUsed after 3× global.gc(), measured in the bridge process (the emulator runs in a child process)"],
  };
  const side = (name: string, s: ThroughputSide): [string, ...string[]] => [
    name,
    String(s.chunks),
    fmt(s.wallMs, 0),
    fmt(s.chunksPerSecond, 0),
    fmt(s.cpuMsPer1000, 1),
    fmt(s.emulatorCpuMsPer1000, 1),
  ];
  const t = throughput;
  const throughputTable: Table = {
    title: `5. Throughput: ${t.streams} concurrent streams × ${t.tokensPerStream} text deltas`,
    header: ["", "chunks", "wall ms", "chunks/s", "CPU ms / 1k chunks (this process)", "emulator CPU ms / 1k chunks"],
    rows: [side("direct client", t.direct), side("cursor-bridge + SSE client", t.bridge)],
    notes: [
      `CPU added by the bridge path: ${fmt(t.bridge.cpuMsPer1000 - t.direct.cpuMsPer1000, 1)} ms per 1,000 chunks (includes parsing SSE in the client)`,
      `bridge/direct chunks per second: ${fmt(t.bridge.chunksPerSecond / t.direct.chunksPerSecond, 2)}×`,
    ],
  };
  const targets: TargetResult[] = [
    {
      scenario: "memory",
      target: "≤ 64 KB heap per parked conversation",
      measured: `${kb(memory.heapBytesPerConversation)} KB`,
      met: memory.heapBytesPerConversation <= 64 * 1024,
    },
    {
      scenario: "memory",
      target: "≤ 40 KB RSS per parked conversation",
      measured: `${kb(memory.rssBytesPerConversation)} KB`,
      met: memory.rssBytesPerConversation <= 40 * 1024,
    },
  ];
  return { tables: [memoryTable, throughputTable], targets };
}
