/**
 * The one rule every door reports usage by when Cursor has not counted the input: an estimated usage whose input is 0
 * (a response that ends on tool calls before the turn's first checkpoint: backend/turn-usage.ts takes the input from
 * the checkpoint's context size) reports the request's input estimate instead (the engine's `requestInputEstimate`,
 * counted once per request). It is the estimate the gateway reserves a turn by and bills a cut one by
 * (gateway/limits), and the input of a cut answer's usage (stop-sequences.ts, `CutUsage`), so what a client is told is
 * what a key is billed.
 */
import type { Usage } from "../../backend/types.js";

/** `usage` with the request's input estimate when it is an estimate without an input figure; else `usage` itself. */
export function withInputEstimate(usage: Usage, inputTokens: () => number): Usage {
  if (usage.source === "cursor" || usage.inputTokens > 0) return usage;
  const input = inputTokens();
  if (input === 0) return usage;
  return { ...usage, inputTokens: input, totalTokens: input + usage.outputTokens };
}
