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

/** What the responses of a turn have reported so far, by count (the "already reported" tally of {@link segmentUsage}). */
export type ReportedUsage = TurnEndedUsage;

/** A tally with nothing reported yet. */
export function nothingReported(): ReportedUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
}

/**
 * The usage of a segment (docs/protocol.md §4.6). A segment that ends on tool calls ends before Cursor counts the
 * turn: it reports the estimate from its token deltas and the checkpoint's context size (before the first checkpoint,
 * `inputEstimate`, the request's own estimate, docs/api.md). The segment that ends the turn gets Cursor's `turn_ended`
 * counts, which are the whole Run's, the steps of earlier segments included; it reports them minus what the earlier
 * segments of the same Run reported (`reported`), each count on its own and never below 0, so that the responses of a
 * turn add up to Cursor's counts. Its cache reads and writes are parts of its input and its reasoning part of its
 * output, so each is at most what is left of those (the reads first): when earlier estimates reported more input than
 * Cursor's uncached input, the turn's input and output still add up, its cache counts fall short by the difference.
 * A server that sends no counts gets the estimate.
 * `reported` is updated with what this segment reports.
 */
export function segmentUsage(
  session: UsageCounters | undefined,
  reported: ReportedUsage = nothingReported(),
  inputEstimate?: () => number,
): Usage {
  const cursor = session?.turnUsage;
  if (cursor !== undefined) {
    const left = (count: keyof ReportedUsage) => Math.max(0, cursor[count] - reported[count]);
    // input_tokens already holds the cache reads and writes (U6): never less than they are in Cursor's own counts.
    const whole = Math.max(cursor.input, cursor.cacheRead + cursor.cacheWrite);
    const input = Math.max(0, whole - reported.input);
    // The cache parts are parts of this response's input: what earlier estimates reported as input stood for some.
    const cacheRead = Math.min(left("cacheRead"), input);
    const cacheWrite = Math.min(left("cacheWrite"), input - cacheRead);
    const output = left("output");
    const usage: Usage = {
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      reasoningTokens: Math.min(left("reasoning"), output),
      source: "cursor",
    };
    tally(reported, usage);
    return usage;
  }
  const output = session?.outputTokens ?? 0;
  const total = Math.max(session?.usedTokens ?? 0, output);
  let input = total - output;
  if (input === 0 && inputEstimate !== undefined) input = inputEstimate();
  const usage: Usage = {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    source: "estimate",
  };
  tally(reported, usage);
  return usage;
}

function tally(reported: ReportedUsage, usage: Usage): void {
  reported.input += usage.inputTokens;
  reported.output += usage.outputTokens;
  reported.cacheRead += usage.cacheReadTokens ?? 0;
  reported.cacheWrite += usage.cacheWriteTokens ?? 0;
  reported.reasoning += usage.reasoningTokens ?? 0;
}
