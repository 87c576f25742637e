/** Shared helpers of the {@link SpendStore} implementations. */
import type { SpendTotals } from "./types.js";

/** The fields of {@link SpendTotals}, in one order (the Redis hash fields and the file's record). */
export const SPEND_FIELDS = [
  "microUsd",
  "requests",
  "inputTokens",
  "outputTokens",
  "cachedTokens",
  "reasoningTokens",
] as const satisfies ReadonlyArray<keyof SpendTotals>;

/** Totals of nothing spent. */
export function zeroSpend(): SpendTotals {
  return { microUsd: 0, requests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
}

/** `a + b`, field by field. */
export function addSpend(a: SpendTotals, b: SpendTotals): SpendTotals {
  const sum = zeroSpend();
  for (const field of SPEND_FIELDS) sum[field] = a[field] + b[field];
  return sum;
}

/** A stored record read back as totals (anything missing or not a finite number counts 0). */
export function spendFrom(record: Readonly<Record<string, unknown>> | undefined): SpendTotals {
  const totals = zeroSpend();
  if (record === undefined) return totals;
  for (const field of SPEND_FIELDS) {
    const value = Number(record[field]);
    totals[field] = Number.isFinite(value) ? value : 0;
  }
  return totals;
}
