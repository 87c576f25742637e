/**
 * What a turn cost: Cursor's per-turn token usage × a price per Cursor model, in USD per million tokens of uncached
 * input, cached input (prompt-cache reads) and output (reasoning included). Cache writes are billed as input.
 * The built-in table holds public list prices of each model family (the provider's API price; Cursor's own for
 * Composer and Auto) and is matched first to last, the first pattern that matches the served model winning; the
 * config file's `prices` entries come before it. A model nothing matches costs {@link FALLBACK_PRICE}.
 */
import type { RequestLog } from "../../surfaces/kit/access-log.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  cachedInput: number;
  output: number;
}

/** One row: a model id pattern (`*` matches any run of characters) and its price. */
export interface PriceRule {
  pattern: string;
  price: ModelPrice;
}

const p = (input: number, cachedInput: number, output: number): ModelPrice => ({ input, cachedInput, output });

/** Unknown models: priced like a mid-range frontier model, so a missing row over-counts rather than under-counts. */
export const FALLBACK_PRICE: ModelPrice = p(3, 0.3, 15);

/** The built-in table (docs/team.md "Key limits, budgets and cost" lists it). */
// biome-ignore format: one row per family reads as a table
export const DEFAULT_PRICES: readonly PriceRule[] = [
  { pattern: "default", price: p(1.25, 0.25, 6) },
  { pattern: "auto", price: p(1.25, 0.25, 6) },
  { pattern: "composer-1", price: p(1.25, 0.125, 10) },
  { pattern: "composer-1.5*", price: p(3.5, 0.35, 17.5) },
  { pattern: "composer-2-fast*", price: p(1.5, 0.35, 7.5) },
  { pattern: "composer-2*", price: p(0.5, 0.2, 2.5) },
  { pattern: "claude-*opus*", price: p(5, 0.5, 25) },
  { pattern: "claude-*sonnet*", price: p(3, 0.3, 15) },
  { pattern: "claude-*haiku*", price: p(1, 0.1, 5) },
  { pattern: "gpt-4o*", price: p(2.5, 1.25, 10) },
  { pattern: "gpt-5.1*", price: p(1.25, 0.125, 10) },
  { pattern: "gpt-5.2*", price: p(1.75, 0.175, 14) },
  { pattern: "gpt-5.3*", price: p(1.75, 0.175, 14) },
  { pattern: "gpt-5.4*", price: p(2.5, 0.25, 15) },
  { pattern: "gpt-5*", price: p(1.25, 0.125, 10) },
  { pattern: "gemini-2.5-pro*", price: p(1.25, 0.31, 10) },
  { pattern: "gemini-3*flash*", price: p(0.5, 0.05, 3) },
  { pattern: "gemini-3*pro*", price: p(2, 0.2, 12) },
  { pattern: "grok-code-fast*", price: p(0.2, 0.02, 1.5) },
  { pattern: "cursor-small", price: p(0, 0, 0) },
];

const patternCache = new Map<string, RegExp>();
function matches(pattern: string, model: string): boolean {
  let regex = patternCache.get(pattern);
  if (regex === undefined) {
    const source = pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    regex = new RegExp(`^${source}$`, "i");
    patternCache.set(pattern, regex);
  }
  return regex.test(model);
}

/** The prices found per rule list (rule lists are made once and never changed), by model; a few models each. */
const found = new WeakMap<readonly PriceRule[], Map<string, ModelPrice>>();
const FOUND_KEPT = 1000;

/** The price of `model`: the first matching rule of `rules` (the config's, then the built-in ones), else the fallback. */
export function priceOf(model: string | undefined, rules: readonly PriceRule[]): ModelPrice {
  if (model === undefined) return FALLBACK_PRICE;
  let prices = found.get(rules);
  if (prices === undefined) {
    prices = new Map();
    found.set(rules, prices);
  }
  const known = prices.get(model);
  if (known !== undefined) return known;
  const price = rules.find((rule) => matches(rule.pattern, model))?.price ?? FALLBACK_PRICE;
  if (prices.size < FOUND_KEPT) prices.set(model, price);
  return price;
}

/** The config file's `prices` (an object of pattern → price) as rules in front of the built-in table. */
export function priceRules(overrides: Readonly<Record<string, ModelPrice>> = {}): PriceRule[] {
  return [...Object.entries(overrides).map(([pattern, price]) => ({ pattern, price })), ...DEFAULT_PRICES];
}

/**
 * The cost of a turn in micro-dollars, rounded to a whole micro-dollar (what `x-cursor-bridge-cost` shows with six
 * decimals and what spend adds up): uncached input × input + cache reads × cached input + output × output.
 */
export function costMicroUsd(usage: RequestLog["usage"], price: ModelPrice): number {
  if (usage === undefined) return 0;
  const cached = Math.min(usage.cacheReadTokens ?? 0, usage.inputTokens);
  const micro =
    (usage.inputTokens - cached) * price.input + cached * price.cachedInput + usage.outputTokens * price.output;
  return Math.max(0, Math.round(micro));
}

/** Micro-dollars as USD with six decimals (`0.001234`). */
export function formatUsd(microUsd: number): string {
  const whole = Math.floor(microUsd / 1_000_000);
  const fraction = String(microUsd % 1_000_000).padStart(6, "0");
  return `${whole}.${fraction}`;
}
