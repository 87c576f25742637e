/**
 * The per-key usage snapshot of the team gateway (issue #29): built by src/gateway/limits/usage.ts, read by the
 * metrics' spend and budget gauges and by the status page's per-key table. Declared here, beside the Principal, so
 * the app's dependencies (deps.ts) can name it.
 */
import type { KeyLimits } from "./principal.js";

/** One key's usage in its current period. */
export interface KeyUsage {
  keyId: string;
  keyName: string;
  /** The period counted: the budget's, else `month`. */
  period: "day" | "week" | "month";
  /** ISO times: the period's start, and its end (when the budget resets). */
  periodStart: string;
  resetsAt: string;
  /** Turn requests admitted in the period (refusals are not counted). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Prompt-cache reads (part of inputTokens). */
  cachedTokens: number;
  /** Part of outputTokens. */
  reasoningTokens: number;
  /** USD spent in the period (micro-dollar precision). */
  spendUsd: number;
  /** The budget of the period; undefined = none. */
  budgetUsd?: number | undefined;
  limits: KeyLimits;
}

/** What metrics and the status page read. */
export interface KeyUsageSource {
  /** Every key's usage now, ordered by key name. */
  keyUsage(): Promise<KeyUsage[]>;
}
