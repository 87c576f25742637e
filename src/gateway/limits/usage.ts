/**
 * The `KeyUsage` snapshot: per virtual key, what it used in its current period (its budget's, else the calendar
 * month). gw-metrics' spend and budget gauges and the status page's per-key table read it. Keys come from `keys`
 * when given (the key store: every key, used or not), else from the keys that made a request since this instance
 * started; the numbers come from the spend store, so with Redis they are the whole deployment's.
 */
import type { KeyUsage, KeyUsageSource } from "../../surfaces/kit/key-usage.js";
import type { Limits, SeenKey } from "./limits.js";

export type { KeyUsage, KeyUsageSource };

/** The snapshot over the limits' spend store; `keys` lists every key (the key store) when given. */
export function createKeyUsageSource(limits: Limits, keys?: () => Promise<readonly SeenKey[]>): KeyUsageSource {
  return {
    async keyUsage() {
      const now = limits.now();
      const listed = keys === undefined ? limits.seenKeys() : await keys();
      const rows = await Promise.all(
        listed.map(async (key): Promise<KeyUsage> => {
          const period = limits.periodOf(key.limits, now);
          const totals = await limits.spend.get(key.keyId, period.id);
          return {
            keyId: key.keyId,
            keyName: key.keyName,
            period: period.kind,
            periodStart: new Date(period.start).toISOString(),
            resetsAt: new Date(period.end).toISOString(),
            requests: totals.requests,
            inputTokens: totals.inputTokens,
            outputTokens: totals.outputTokens,
            cachedTokens: totals.cachedTokens,
            reasoningTokens: totals.reasoningTokens,
            spendUsd: totals.microUsd / 1_000_000,
            budgetUsd: key.limits.budget?.usd,
            limits: key.limits,
          };
        }),
      );
      return rows.sort((a, b) => a.keyName.localeCompare(b.keyName));
    },
  };
}
