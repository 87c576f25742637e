/**
 * Scenario 6 (rebuild cost): a conversation the bridge has never seen arrives with a long history, so the first Run
 * rebuilds it (docs/protocol.md §4.11: one root prompt blob per message, each fetched by the server with
 * `get_blob_args`). Measures the time from the request to the first content token for a small and a large history of
 * fresh conversations (tool calls and results included), so the per-message cost and its growth are both visible.
 */
import type { BenchStack } from "./bench-stack.js";
import { fmt, type Table, type TargetResult } from "./report.js";
import { streamCompletion } from "./sse-client.js";

/** One measured history size. */
export interface RebuildSample {
  messages: number;
  firstContentMs: number;
  msPerMessage: number;
  /** Bridge-process CPU from the request to the end of the stream (read over IPC). */
  bridgeCpuMs: number;
  /** Blobs the emulator fetched with `get_blob_args` during the turn. */
  blobsFetched: number;
}

/** Scenario 6 result. */
export interface RebuildResult {
  samples: RebuildSample[];
}

/** Target: a 10,000-message history starts within 1 s. */
export const REBUILD_TARGET = { messages: 10_000, firstContentMs: 1_000 };

type ChatMessage = Record<string, unknown>;

/** A history of `count` messages: a system prompt, user/assistant pairs and every tenth exchange a tool round trip. */
export function longHistory(count: number, tag: string): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: "system", content: "You are a careful assistant working in a repository." }];
  let i = 0;
  while (messages.length < count - 1) {
    if (i % 10 === 9 && messages.length + 3 < count - 1) {
      const id = `call_${tag}_${i}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "read", arguments: `{"filePath":"/repo/f${i}.ts"}` } }],
      });
      messages.push({ role: "tool", tool_call_id: id, content: `export const value${i} = ${i}; // file ${i}` });
      messages.push({ role: "assistant", content: `File ${i} exports value${i}.` });
    } else {
      messages.push({ role: "user", content: `[${tag}] Question ${i}: what does module ${i} do, briefly?` });
      messages.push({ role: "assistant", content: `Module ${i} parses the configuration section ${i}.` });
    }
    i++;
  }
  messages.push({ role: "user", content: `[${tag}] Summarise the conversation. [[emu:tokens 3]]` });
  return messages;
}

async function measure(stack: BenchStack, count: number, tag: string): Promise<RebuildSample> {
  const messages = longHistory(count, tag);
  await stack.emulator.resetStats();
  const cpu = await stack.bridge.cpuUsage();
  const r = await streamCompletion(stack.bridge.baseURL, { model: "auto", messages });
  const now = await stack.bridge.cpuUsage();
  const used = { user: now.user - cpu.user, system: now.system - cpu.system };
  if (r.firstContentAt === undefined) throw new Error(`rebuild of ${count} messages produced no content`);
  const firstContentMs = r.firstContentAt - r.startedAt;
  const stats = await stack.emulator.stats();
  return {
    messages: messages.length,
    firstContentMs,
    msPerMessage: firstContentMs / messages.length,
    bridgeCpuMs: (used.user + used.system) / 1000,
    blobsFetched: stats.turns.reduce((sum, t) => sum + t.getBlobRequests, 0),
  };
}

/** Scenario 6: warm up, then rebuild fresh conversations of each size (best of `repeats`). */
export async function runRebuild(stack: BenchStack, sizes: readonly number[], repeats: number): Promise<RebuildResult> {
  await measure(stack, 1_000, "warm-up");
  const samples: RebuildSample[] = [];
  for (const size of sizes) {
    let best: RebuildSample | undefined;
    for (let r = 0; r < repeats; r++) {
      const sample = await measure(stack, size, `n${size}-r${r}`);
      if (best === undefined || sample.firstContentMs < best.firstContentMs) best = sample;
    }
    if (best !== undefined) samples.push(best);
  }
  return { samples };
}

/** Table and target of scenario 6. */
export function rebuildReport(result: RebuildResult): { table: Table; targets: TargetResult[] } {
  const table: Table = {
    title: "6. Rebuild from history (new conversation, full history in one request)",
    header: ["messages", "first token ms", "ms/message", "bridge CPU ms", "blobs fetched"],
    rows: result.samples.map((s) => [
      String(s.messages),
      fmt(s.firstContentMs, 0),
      fmt(s.msPerMessage, 3),
      fmt(s.bridgeCpuMs, 0),
      String(s.blobsFetched),
    ]),
    notes: [
      "every history message is one root prompt blob the emulator fetches with get_blob_args (§4.11, §5.3)",
      "best of the repeats per size, after a 1,000-message warm-up; equal ms/message across sizes = linear",
    ],
  };
  const large = result.samples.find((s) => s.messages === REBUILD_TARGET.messages);
  const targets: TargetResult[] = [
    {
      scenario: "6. rebuild",
      target: `≤ ${REBUILD_TARGET.firstContentMs} ms to the first token for ${REBUILD_TARGET.messages.toLocaleString("en")} messages`,
      measured: large === undefined ? "not measured" : `${fmt(large.firstContentMs, 0)} ms`,
      met: large !== undefined && large.firstContentMs <= REBUILD_TARGET.firstContentMs,
    },
  ];
  return { table, targets };
}
