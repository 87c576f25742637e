/**
 * Scenario 1, overhead: the same streamed completion through cursor-bridge and through the direct connect-es client,
 * at several concurrencies, rounds of the two interleaved so both see the same machine state. Reported: TTFT (first
 * non-empty text) and total time, p50/p99 of each side and the added time (bridge percentile − direct percentile).
 */
import { type BenchStack, newConversationId } from "./bench-stack.js";
import { RawBlobStore, runDirectTurn } from "./raw-driver.js";
import { fmt, percentile, type Row, type Table, type TargetResult } from "./report.js";
import { streamCompletion } from "./sse-client.js";

/** Settings of the overhead scenario. */
export interface OverheadSettings {
  concurrencies: readonly number[];
  /** Samples per side at each concurrency (rounded up to whole rounds). */
  samples: (concurrency: number) => number;
  tokens: number;
  warmup: number;
}

/** Measurements at one concurrency. */
export interface OverheadResult {
  concurrency: number;
  samples: number;
  direct: { ttftP50: number; ttftP99: number; totalP50: number; totalP99: number };
  bridge: { ttftP50: number; ttftP99: number; totalP50: number; totalP99: number };
  added: { ttftP50: number; ttftP99: number; totalP50: number; totalP99: number };
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

function summary(samples: readonly Sample[]) {
  const ttft = samples.map((s) => s.ttft);
  const total = samples.map((s) => s.total);
  return {
    ttftP50: percentile(ttft, 50),
    ttftP99: percentile(ttft, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
  };
}

/** Runs the scenario. */
export async function runOverhead(stack: BenchStack, settings: OverheadSettings): Promise<OverheadResult[]> {
  const prompt = `[[emu:tokens ${settings.tokens}]] overhead probe`;
  for (let i = 0; i < settings.warmup; i++) {
    await Promise.all([directSample(stack, prompt), bridgeSample(stack, prompt)]);
  }
  const results: OverheadResult[] = [];
  for (const concurrency of settings.concurrencies) {
    const rounds = Math.ceil(settings.samples(concurrency) / concurrency);
    const direct: Sample[] = [];
    const bridge: Sample[] = [];
    for (let round = 0; round < rounds; round++) {
      const batch = Array.from({ length: concurrency }, () => prompt);
      // Alternate which side goes first so neither always runs on a warmer machine.
      const sides = round % 2 === 0 ? (["direct", "bridge"] as const) : (["bridge", "direct"] as const);
      for (const side of sides) {
        const run = side === "direct" ? directSample : bridgeSample;
        const samples = await Promise.all(batch.map((p) => run(stack, p)));
        (side === "direct" ? direct : bridge).push(...samples);
      }
    }
    const d = summary(direct);
    const b = summary(bridge);
    results.push({
      concurrency,
      samples: direct.length,
      direct: d,
      bridge: b,
      added: {
        ttftP50: b.ttftP50 - d.ttftP50,
        ttftP99: b.ttftP99 - d.ttftP99,
        totalP50: b.totalP50 - d.totalP50,
        totalP99: b.totalP99 - d.totalP99,
      },
    });
  }
  return results;
}

/** The printed table. */
export function overheadTable(results: readonly OverheadResult[], notes: string[]): Table {
  const header: Row = [
    "streams",
    "n",
    "TTFT p50 direct/bridge",
    "TTFT p99 direct/bridge",
    "added TTFT p50/p99",
    "total p50 direct/bridge",
    "total p99 direct/bridge",
    "added total p50/p99",
  ];
  const pair = (a: number, b: number) => `${fmt(a)} / ${fmt(b)}`;
  const rows = results.map(
    (r): Row => [
      String(r.concurrency),
      String(r.samples),
      pair(r.direct.ttftP50, r.bridge.ttftP50),
      pair(r.direct.ttftP99, r.bridge.ttftP99),
      pair(r.added.ttftP50, r.added.ttftP99),
      pair(r.direct.totalP50, r.bridge.totalP50),
      pair(r.direct.totalP99, r.bridge.totalP99),
      pair(r.added.totalP50, r.added.totalP99),
    ],
  );
  return { title: "1. Overhead vs a direct connect-es client (ms)", header, rows, notes };
}

/** Targets: added p50 ≤ 1 ms and p99 ≤ 5 ms at the highest concurrency, for TTFT and for total time. */
export function overheadTargets(results: readonly OverheadResult[]): TargetResult[] {
  const top = results.at(-1);
  if (top === undefined) return [];
  const at = `${top.concurrency} streams`;
  return [
    {
      scenario: "overhead",
      target: `added TTFT p50 ≤ 1 ms at ${at}`,
      measured: `${fmt(top.added.ttftP50, 2)} ms`,
      met: top.added.ttftP50 <= 1,
    },
    {
      scenario: "overhead",
      target: `added TTFT p99 ≤ 5 ms at ${at}`,
      measured: `${fmt(top.added.ttftP99, 2)} ms`,
      met: top.added.ttftP99 <= 5,
    },
    {
      scenario: "overhead",
      target: `added total p50 ≤ 1 ms at ${at}`,
      measured: `${fmt(top.added.totalP50, 2)} ms`,
      met: top.added.totalP50 <= 1,
    },
    {
      scenario: "overhead",
      target: `added total p99 ≤ 5 ms at ${at}`,
      measured: `${fmt(top.added.totalP99, 2)} ms`,
      met: top.added.totalP99 <= 5,
    },
  ];
}
