/**
 * Scenarios 2 (tool round trips) and 3 (continuation cost): the same conversation through cursor-bridge (an OpenAI
 * client sending the whole history each time, as clients do) and through the replay baseline, with the emulator's
 * per-turn statistics (`turns[].requestBytes`: every client→server protobuf byte of one Run) as the judge.
 */
import type { EmulatorStats } from "../src/emulator/index.js";
import type { BenchStack } from "./bench-stack.js";
import { PerMessageBlobConversation, ReplayConversation } from "./replay-baseline.js";
import { fmt, type Row, type Table, type TargetResult } from "./report.js";
import { type StreamedCompletion, streamCompletion } from "./sse-client.js";
import { MCP_TOOLS, OPENAI_TOOLS, SYSTEM_PROMPT, userMessage } from "./workload.js";

type ChatMessage = Record<string, unknown>;

/** A conversation through cursor-bridge, carrying the full OpenAI history like any client. */
export class BridgeConversation {
  private readonly messages: ChatMessage[] = [{ role: "system", content: SYSTEM_PROMPT }];

  constructor(private readonly baseURL: string) {}

  async send(text: string): Promise<StreamedCompletion> {
    this.messages.push({ role: "user", content: text });
    return this.complete();
  }

  async sendToolResults(results: readonly { callId: string; result: string }[]): Promise<StreamedCompletion> {
    for (const r of results) this.messages.push({ role: "tool", tool_call_id: r.callId, content: r.result });
    return this.complete();
  }

  private async complete(): Promise<StreamedCompletion> {
    const r = await streamCompletion(this.baseURL, { model: "auto", messages: this.messages, tools: OPENAI_TOOLS });
    if (r.toolCalls.length > 0) {
      this.messages.push({
        role: "assistant",
        content: null,
        tool_calls: r.toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        })),
      });
    } else this.messages.push({ role: "assistant", content: r.text });
    return r;
  }
}

/** Counts of one side of the tool scenario. */
export interface ToolSideResult {
  runs: number;
  bootstrapWaits: number;
  runsPerUserTurn: number;
  runsPerToolResult: number;
  totalMs: number;
  requestBytes: number;
}

/** Scenario 2 result. */
export interface ToolRoundTripResult {
  toolCalls: number;
  bootstrapLatencyMs: number;
  bridge: ToolSideResult;
  /** Full-history replay, a new Run per request, as chat-only bridges do. */
  replay: ToolSideResult;
  /** Keeps the Run open across a tool call but uploads every message as its own blob on each user turn. */
  perMessageBlobs: ToolSideResult;
}

export function toolPrompt(i: number): string {
  return `${userMessage(i)} [[emu:tool read {"filePath":"/repo/src/module-${i}.ts"}]]`;
}

function sideResult(stats: EmulatorStats, userTurns: number, totalMs: number): ToolSideResult {
  const runs = stats.runStreams;
  return {
    runs,
    // The emulator waits its bootstrap latency once per Run, before any output (src/emulator/turn.ts).
    bootstrapWaits: stats.turns.length,
    runsPerUserTurn: runs / userTurns,
    runsPerToolResult: (runs - userTurns) / userTurns,
    totalMs,
    requestBytes: stats.turns.reduce((sum, t) => sum + t.requestBytes, 0),
  };
}

export function expectResult(text: string, i: number): void {
  if (!text.includes(`read returned: contents of module ${i}`))
    throw new Error(`turn ${i}: tool result missing in "${text}"`);
}

/** Scenario 2: `toolCalls` user turns, each asking for one tool call whose result flows back. */
export async function runToolRoundTrips(
  stack: BenchStack,
  toolCalls: number,
  bootstrapLatencyMs: number,
): Promise<ToolRoundTripResult> {
  await stack.emulator.resetStats();
  const bridge = new BridgeConversation(stack.bridge.baseURL);
  let started = performance.now();
  for (let i = 1; i <= toolCalls; i++) {
    const first = await bridge.send(toolPrompt(i));
    const call = first.toolCalls[0];
    if (first.finishReason !== "tool_calls" || call === undefined) throw new Error(`turn ${i}: expected a tool call`);
    const second = await bridge.sendToolResults([{ callId: call.id, result: `contents of module ${i}` }]);
    expectResult(second.text, i);
  }
  const bridgeResult = sideResult(await stack.emulator.stats(), toolCalls, performance.now() - started);

  await stack.emulator.resetStats();
  const replay = new ReplayConversation(stack.direct, {
    model: "default",
    tools: MCP_TOOLS,
    systemPrompt: SYSTEM_PROMPT,
  });
  started = performance.now();
  for (let i = 1; i <= toolCalls; i++) {
    const first = await replay.send(toolPrompt(i));
    const call = first.toolCalls[0];
    if (!first.abandoned || call === undefined) throw new Error(`replay turn ${i}: expected a tool call`);
    const args = { filePath: `/repo/src/module-${i}.ts` };
    const second = await replay.sendToolResults([{ ...call, args, result: `contents of module ${i}` }]);
    expectResult(second.text, i);
  }
  const replayResult = sideResult(await stack.emulator.stats(), toolCalls, performance.now() - started);

  await stack.emulator.resetStats();
  const perMessage = new PerMessageBlobConversation(stack.direct, {
    model: "default",
    tools: MCP_TOOLS,
    systemPrompt: SYSTEM_PROMPT,
  });
  started = performance.now();
  for (let i = 1; i <= toolCalls; i++) {
    const r = await perMessage.send(toolPrompt(i), () => ({
      args: { filePath: `/repo/src/module-${i}.ts` },
      result: `contents of module ${i}`,
    }));
    if (r.toolCalls.length !== 1) throw new Error(`per-message-blob turn ${i}: expected one tool call`);
    expectResult(r.text, i);
  }
  const perMessageResult = sideResult(await stack.emulator.stats(), toolCalls, performance.now() - started);
  return {
    toolCalls,
    bootstrapLatencyMs,
    bridge: bridgeResult,
    replay: replayResult,
    perMessageBlobs: perMessageResult,
  };
}

/** Scenario 3 result: bytes per turn on each side. */
export interface ContinuationResult {
  turns: number;
  bridgeBytes: number[];
  replayBytes: number[];
}

/** Scenario 3: a `turns`-turn chat (system prompt + declared tools on every request, no tool calls). */
export async function runContinuation(stack: BenchStack, turns: number): Promise<ContinuationResult> {
  await stack.emulator.resetStats();
  const bridge = new BridgeConversation(stack.bridge.baseURL);
  for (let i = 1; i <= turns; i++) {
    const r = await bridge.send(userMessage(i));
    if (!r.text.startsWith("You said: Turn")) throw new Error(`bridge turn ${i}: unexpected reply "${r.text}"`);
  }
  const bridgeStats = await stack.emulator.stats();
  await stack.emulator.resetStats();
  const replay = new ReplayConversation(stack.direct, {
    model: "default",
    tools: MCP_TOOLS,
    systemPrompt: SYSTEM_PROMPT,
  });
  for (let i = 1; i <= turns; i++) await replay.send(userMessage(i));
  const replayStats = await stack.emulator.stats();
  if (new Set(bridgeStats.turns.map((t) => t.conversationId)).size !== 1)
    throw new Error("bridge split the conversation");
  return {
    turns,
    bridgeBytes: bridgeStats.turns.map((t) => t.requestBytes),
    replayBytes: replayStats.turns.map((t) => t.requestBytes),
  };
}

/** Tables and targets of scenarios 2 and 3. */
export function conversationReport(
  tools: ToolRoundTripResult,
  cont: ContinuationResult,
): { tables: Table[]; targets: TargetResult[] } {
  const toolRow = (name: string, s: ToolSideResult): Row => [
    name,
    String(s.runs),
    fmt(s.runsPerUserTurn, 2),
    fmt(s.runsPerToolResult, 2),
    String(s.bootstrapWaits),
    fmt(s.totalMs, 0),
    String(s.requestBytes),
  ];
  const toolTable: Table = {
    title: `2. Tool round trips: ${tools.toolCalls} user turns × 1 tool call (bootstrap ${tools.bootstrapLatencyMs} ms per Run)`,
    header: ["", "Runs", "Runs/user turn", "Runs/tool result", "bootstrap waits", "total ms", "upstream bytes"],
    rows: [
      toolRow("cursor-bridge", tools.bridge),
      toolRow("full-history replay", tools.replay),
      toolRow("parked, one blob per message", tools.perMessageBlobs),
    ],
    notes: [
      "full-history replay: a new Run per request, as chat-only bridges do (the Run that asked for a tool is abandoned)",
      "parked, one blob per message: keeps the Run open across the tool call, but each user turn opens a Run listing every earlier message as its own blob",
      `bridge/replay: ${fmt(tools.bridge.runs / tools.replay.runs, 2)}× the Runs, ${fmt(tools.bridge.totalMs / tools.replay.totalMs, 2)}× the time, ${fmt(tools.bridge.requestBytes / tools.replay.requestBytes, 2)}× the bytes`,
      `bridge/parked one-blob-per-message: ${fmt(tools.bridge.totalMs / tools.perMessageBlobs.totalMs, 2)}× the time, ${fmt(tools.bridge.requestBytes / tools.perMessageBlobs.requestBytes, 2)}× the bytes`,
    ],
  };
  const at = (bytes: number[], n: number) => bytes[n - 1] ?? Number.NaN;
  const picks = [1, 2, 5, 10, 15, 20].filter((n) => n <= cont.turns);
  const ratio = (bytes: number[]) => at(bytes, cont.turns) / at(bytes, 2);
  const contTable: Table = {
    title: `3. Continuation cost: upstream bytes per turn over ${cont.turns} turns (system prompt + ${OPENAI_TOOLS.length} tools each)`,
    header: ["turn", ...picks.map((n) => String(n)), `turn ${cont.turns} / turn 2`],
    rows: [
      ["cursor-bridge", ...picks.map((n) => String(at(cont.bridgeBytes, n))), fmt(ratio(cont.bridgeBytes), 2)],
      ["full-history replay", ...picks.map((n) => String(at(cont.replayBytes, n))), fmt(ratio(cont.replayBytes), 2)],
    ],
    notes: [
      "bytes = every client→server protobuf byte of the Run (run_request, blob answers, request context with tools and system prompt, exec answers, acks, heartbeats)",
      "the emulator caches blobs by content id, so an unchanged blob is uploaded once; replay re-uploads because its flattened history blob changes every turn",
    ],
  };
  const bridgeRatio = ratio(cont.bridgeBytes);
  const targets: TargetResult[] = [
    {
      scenario: "tool round trips",
      target: "1 Run per user turn",
      measured: fmt(tools.bridge.runsPerUserTurn, 2),
      met: tools.bridge.runsPerUserTurn === 1,
    },
    {
      scenario: "tool round trips",
      target: "0 Runs per tool result",
      measured: fmt(tools.bridge.runsPerToolResult, 2),
      met: tools.bridge.runsPerToolResult === 0,
    },
    {
      scenario: "continuation",
      target: `turn ${cont.turns} ≤ 1.2 × turn 2 bytes`,
      measured: `${fmt(bridgeRatio, 2)}× (replay ${fmt(ratio(cont.replayBytes), 2)}×)`,
      met: bridgeRatio <= 1.2,
    },
  ];
  return { tables: [toolTable, contTable], targets };
}
