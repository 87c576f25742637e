/**
 * Usage of a turn (docs/protocol.md §4.6): Cursor's own counts from `TurnEndedUpdate` (cursor-protocol-addendum-2.md
 * §3) when it sends them, else an estimate from `token_delta`s and the checkpoint's context size.
 */
import type { TurnEndedUpdate } from "../gen/agent/v1/interaction_pb.js";
import type { Usage } from "./types.js";

/**
 * The counts of a `TurnEndedUpdate`, as Cursor sends them. `input` is the whole prompt: the cache reads and writes are
 * parts of it, so the uncached input is input − cacheRead − cacheWrite (cursor-protocol-addendum-3.md U6).
 */
export interface TurnEndedUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
}

/** The counts of a `TurnEndedUpdate`; undefined when it carries neither input nor output tokens. */
export function turnEndedUsage(update: TurnEndedUpdate): TurnEndedUsage | undefined {
  if (update.inputTokens === undefined && update.outputTokens === undefined) return undefined;
  const n = (value: bigint | undefined) => (value === undefined || value < 0n ? 0 : Number(value));
  return {
    input: n(update.inputTokens),
    output: n(update.outputTokens),
    cacheRead: n(update.cacheReadTokens),
    cacheWrite: n(update.cacheWriteTokens),
    reasoning: n(update.reasoningTokens),
  };
}

/** What a Run session has counted (run-session.ts). */
export interface UsageCounters {
  turnUsage: TurnEndedUsage | undefined;
  outputTokens: number;
  usedTokens: number | undefined;
}

/**
 * The usage of a segment (docs/protocol.md §4.6): Cursor's `turn_ended` counts when the turn ended with them (the
 * whole turn's, steps before earlier tool-call responses included), else the estimate from token deltas and the
 * checkpoint's context size (a segment that ends on tool calls: Cursor has not counted the turn yet).
 */
export function segmentUsage(session: UsageCounters | undefined): Usage {
  const cursor = session?.turnUsage;
  if (cursor !== undefined) {
    // input_tokens already holds the cache reads and writes (U6); never less than they are.
    const input = Math.max(cursor.input, cursor.cacheRead + cursor.cacheWrite);
    return {
      inputTokens: input,
      outputTokens: cursor.output,
      totalTokens: input + cursor.output,
      cacheReadTokens: cursor.cacheRead,
      cacheWriteTokens: cursor.cacheWrite,
      reasoningTokens: Math.min(cursor.reasoning, cursor.output),
      source: "cursor",
    };
  }
  const output = session?.outputTokens ?? 0;
  const total = Math.max(session?.usedTokens ?? 0, output);
  return {
    inputTokens: total - output,
    outputTokens: output,
    totalTokens: total,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    source: "estimate",
  };
}
