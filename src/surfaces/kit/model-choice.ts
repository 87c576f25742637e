/**
 * The one mapping table from each client's model controls to the engine's {@link ModelChoice} (docs/clients.md
 * "Choosing a model"). The engine then maps the choice onto what the model defines (src/backend/model-selection.ts):
 * an effort tier becomes `effort` or `reasoning`, clamped to the nearest tier the model offers in its own spelling
 * (`extra-high` where the model says so); `thinking` is set only where the model has it; `fast=false` is sent unless
 * the person asked for fast; a model id with a variant suffix (`claude-opus-4-8-thinking-low`) selects that variant
 * and wins over these controls.
 */
import type { EffortTier, ModelChoice } from "../../backend/types.js";

/** One row of the mapping table: a client control and what it becomes. */
export interface ModelChoiceRow {
  door: "chat" | "responses" | "messages" | "acp" | "any";
  control: string;
  becomes: string;
}

/** The mapping table (documented in docs/clients.md "Choosing a model", checked against these functions by their tests). */
export const MODEL_CHOICE_TABLE: readonly ModelChoiceRow[] = [
  { door: "chat", control: "reasoning_effort", becomes: "effort tier (none, minimal, low, medium, high, xhigh)" },
  { door: "responses", control: "reasoning.effort", becomes: "effort tier (none, minimal, low, medium, high, xhigh)" },
  { door: "messages", control: "output_config.effort", becomes: "effort tier (low, medium, high, xhigh, max)" },
  {
    door: "messages",
    control: "thinking.budget_tokens",
    becomes: "effort tier when no output_config.effort: ≤ 4096 low, ≤ 16384 medium, above that high",
  },
  { door: "messages", control: "thinking.type", becomes: "thinking: enabled/adaptive → true, disabled → false" },
  {
    door: "messages",
    control: "anthropic-beta context-1m-*",
    becomes: "the 1m context tier, in Max mode, where the model has it (Claude Code's `[1m]` models)",
  },
  { door: "acp", control: "effort / context / fast options", becomes: "the tier, the context tier, fast" },
  { door: "any", control: "model id `<base>-<suffix>`", becomes: "that variant (thinking, tier, context, fast)" },
];

const TIERS: ReadonlySet<string> = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/** An effort value as a tier (`extra-high` is `xhigh`); undefined when it is none of them. */
export function effortTier(value: string | null | undefined): EffortTier | undefined {
  if (value == null) return undefined;
  const tier = value === "extra-high" ? "xhigh" : value;
  return TIERS.has(tier) ? (tier as EffortTier) : undefined;
}

/** OpenAI chat `reasoning_effort` and Responses `reasoning.effort`. */
export function choiceFromEffort(effort: string | null | undefined): ModelChoice {
  const tier = effortTier(effort);
  return tier === undefined ? {} : { effort: tier };
}

/** Anthropic `thinking.budget_tokens` → tier (P22 of the wire notes' sources: ≤ 4096 low, ≤ 16384 medium, high). */
export function effortFromBudget(budget: number): EffortTier {
  if (budget <= 4096) return "low";
  return budget <= 16_384 ? "medium" : "high";
}

/**
 * Whether an `anthropic-beta` header asks for the 1M-token context window (`context-1m-2025-08-07`): Claude Code sends
 * it for a model picked with a `[1m]` suffix (`claude-sonnet-4-6[1m]`), and the model id then carries no suffix.
 */
export function wantsLongContext(beta: string | null | undefined): boolean {
  return beta?.split(",").some((name) => name.trim().toLowerCase().startsWith("context-1m-")) === true;
}

/** Anthropic `thinking`, `output_config.effort` and the `anthropic-beta` header (its 1M context). */
export function choiceFromAnthropic(
  thinking: { type: string; budget_tokens?: number | undefined } | null | undefined,
  effort: string | null | undefined,
  beta?: string | null | undefined,
): ModelChoice {
  const choice: ModelChoice = {};
  if (wantsLongContext(beta)) choice.contextIfOffered = "1m";
  if (thinking?.type === "enabled" || thinking?.type === "adaptive") choice.thinking = true;
  else if (thinking?.type === "disabled") choice.thinking = false;
  const tier = effortTier(effort);
  if (tier !== undefined) choice.effort = tier;
  else if (thinking?.type === "enabled" && thinking.budget_tokens !== undefined) {
    choice.effort = effortFromBudget(thinking.budget_tokens);
  }
  return choice;
}

/** `{choice}` for a turn's options, or nothing when the request chose nothing. */
export function withChoice(choice: ModelChoice): { choice?: ModelChoice } {
  return Object.keys(choice).length === 0 ? {} : { choice };
}
