/**
 * A turn's worst-case cost, reserved against its key's budget before the turn starts (limits.ts) and corrected to the
 * real cost when it ends. Input: the request's input estimate (`TurnToAdmit.inputTokens`, the one figure the engine
 * and the doors report too: the characters of the request's instructions, messages and tool declarations at
 * {@link CHARS_PER_TOKEN} a token, plus {@link IMAGE_TOKENS} per image), all priced as uncached input. Output: the
 * client's `max_tokens` / `max_completion_tokens` / `max_output_tokens`, else {@link DEFAULT_OUTPUT_TOKENS}, at
 * the output price. `auto` / `default` (Cursor picks the model) are priced at the highest input and output prices of
 * the table ({@link worstCasePrice}). The kit holds the output to that cap by the same estimate (kit/stop-sequences.ts)
 * and a turn it cuts is billed by it, but a turn that ends on its own is billed Cursor's usage, which counts Cursor's
 * own context, so it can cost more than this estimate; the budget then ends a little past its amount, by at most that
 * difference for the requests running at the time.
 */
import type { TurnToAdmit } from "../../surfaces/kit/turn-admission.js";
import { CHARS_PER_TOKEN, IMAGE_TOKENS } from "../../util/token-estimate.js";
import { type ModelPrice, type PriceRule, priceOf } from "./prices.js";

/** The estimate's rates (util/token-estimate.ts: the kit's output cap counts at the same). */
export { CHARS_PER_TOKEN, IMAGE_TOKENS };
/** Output tokens assumed when the client sets no cap. */
export const DEFAULT_OUTPUT_TOKENS = 4096;

/** The price a worst case is computed at: the model's, or for `auto` / `default` the table's highest. */
export function worstCasePrice(model: string, rules: readonly PriceRule[]): ModelPrice {
  if (!/^(auto|default)$/i.test(model)) return priceOf(model, rules);
  let input = 0;
  let output = 0;
  for (const rule of rules) {
    input = Math.max(input, rule.price.input);
    output = Math.max(output, rule.price.output);
  }
  return { input, cachedInput: input, output };
}

/** The worst-case cost of a turn at `price`, micro-dollars (rounded up). */
export function worstCaseMicroUsd(turn: TurnToAdmit, price: ModelPrice): number {
  const output = turn.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS;
  return Math.ceil(turn.inputTokens() * price.input + output * price.output);
}
