/**
 * The request's input tokens by estimate, and the one rule every door reports usage by when Cursor has not counted
 * the input: an estimated usage whose input is 0 (a response that ends on tool calls before the turn's first
 * checkpoint: backend/turn-usage.ts takes the input from the checkpoint's context size) reports the request's
 * estimate instead. It is the estimate the gateway reserves a turn by and bills a cut one by (gateway/limits), and the
 * input of a cut answer's usage (stop-sequences.ts, `CutUsage`), so what a client is told is what a key is billed.
 */
import type { Usage } from "../../backend/types.js";
import type { EngineRequest } from "../../engine/index.js";
import { estimateTokensOf } from "../../util/token-estimate.js";

/**
 * The request's input tokens by estimate (`estimateTokensOf` over its instructions, messages and tools: every
 * character, keys included, at 4 a token, 1,600 per image), counted once, when first asked.
 */
export function inputEstimate(request: Pick<EngineRequest, "instructions" | "messages" | "tools">): () => number {
  let tokens: number | undefined;
  return () => {
    tokens ??= estimateTokensOf([request.instructions, request.messages, request.tools]);
    return tokens;
  };
}

/** `usage` with the request's input estimate when it is an estimate without an input figure; else `usage` itself. */
export function withInputEstimate(usage: Usage, inputTokens: () => number): Usage {
  if (usage.source === "cursor" || usage.inputTokens > 0) return usage;
  const input = inputTokens();
  if (input === 0) return usage;
  return { ...usage, inputTokens: input, totalTokens: input + usage.outputTokens };
}
