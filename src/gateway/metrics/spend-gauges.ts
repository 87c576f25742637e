/** The per-key spend and budget gauges of /metrics, read from a {@link KeySpendSource} on each scrape. */
import { Gauge, type Registry } from "prom-client";
import type { Logger } from "../../util/logger.js";
import type { KeySpend, KeySpendSource } from "./key-spend-source.js";
import { clampLabel } from "./request-tally.js";

/**
 * The per-key spend gauges, filled on each scrape from one snapshot (both gauges' collects share it); a key that is
 * gone disappears. When the source fails the gauges are empty for that scrape and a warning is logged.
 */
export function registerSpendGauges(registry: Registry, prefix: string, source: KeySpendSource, logger: Logger): void {
  let pending: Promise<readonly KeySpend[]> | undefined;
  const snapshot = (): Promise<readonly KeySpend[]> => {
    if (pending === undefined) {
      pending = source
        .snapshot()
        .catch((error: unknown) => {
          logger.warn("Could not read the keys' spend for /metrics", { error });
          return [];
        })
        .finally(() => {
          pending = undefined;
        });
    }
    return pending;
  };
  const registers = [registry];
  new Gauge({
    name: `${prefix}key_spend_usd`,
    help: "USD spent by a virtual key in its current budget period.",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) this.labels(clampLabel(key.keyName)).set(key.spendUsd);
    },
  });
  new Gauge({
    name: `${prefix}key_budget_usd`,
    help: "A virtual key's budget for its current period, in USD (keys with a budget only).",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) if (key.budgetUsd !== undefined) this.labels(clampLabel(key.keyName)).set(key.budgetUsd);
    },
  });
  new Gauge({
    name: `${prefix}key_budget_remaining_usd`,
    help: "USD left of a virtual key's budget in its current period (never below 0; keys with a budget only).",
    labelNames: ["key"] as const,
    registers,
    async collect() {
      const keys = await snapshot();
      this.reset();
      for (const key of keys) {
        if (key.budgetUsd !== undefined)
          this.labels(clampLabel(key.keyName)).set(Math.max(0, key.budgetUsd - key.spendUsd));
      }
    },
  });
}
