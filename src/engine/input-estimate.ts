/**
 * The request's input tokens by estimate, counted at most once per request whoever asks: the gateway (the worst case
 * it reserves a turn by, the bill of a cut turn, gateway/limits), the engine (the input of a segment's estimated usage,
 * backend/turn-usage.ts), the kit (the usage it reports without Cursor's input figure and a cut answer's usage,
 * surfaces/kit) and Messages' `message_start`. The kit makes it when a request arrives and hands it to each of them
 * (`TurnToAdmit.inputTokens`, `StartTurnOptions.inputEstimate`, `ServedTurn.inputTokens`); a turn started without
 * one (forwarded from another instance) gets its own.
 */
import { estimateTokensOf } from "../util/token-estimate.js";
import type { EngineRequest } from "./types.js";

/**
 * The request's input tokens by estimate (`estimateTokensOf` over its instructions, messages and tools: every
 * character, keys included, at 4 a token, 1,600 per image), counted when first asked and never again.
 */
export function requestInputEstimate(
  request: Pick<EngineRequest, "instructions" | "messages" | "tools">,
): () => number {
  let tokens: number | undefined;
  return () => {
    tokens ??= estimateTokensOf([request.instructions, request.messages, request.tools]);
    return tokens;
  };
}
