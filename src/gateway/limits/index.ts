/** The team gateway's limits, budgets and cost (issue #29): see limits.ts. */
export { createLimits, type Limits, type LimitsOptions, runsTurn, type SeenKey, WINDOW_MS } from "./limits.js";
export { periodAt } from "./periods.js";
export {
  costMicroUsd,
  DEFAULT_PRICES,
  FALLBACK_PRICE,
  formatUsd,
  type ModelPrice,
  priceOf,
  priceRules,
} from "./prices.js";
export { createKeyUsageSource, type KeyUsage, type KeyUsageSource } from "./usage.js";
export { DEFAULT_OUTPUT_TOKENS, worstCaseMicroUsd, worstCasePrice } from "./worst-case.js";
