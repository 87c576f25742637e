/**
 * Where the spend and budget gauges of `/metrics` come from: a snapshot of every virtual key's spend in its current
 * budget period. The gateway's limits (src/gateway/limits) own the numbers; metrics only read them, once per scrape.
 */

/** One key's spend in its current budget period. */
export interface KeySpend {
  /** The key's name (`keys create --name`), never the key or its hash: it becomes the `key` label. */
  readonly keyName: string;
  /** USD spent in the current period (or in total, for a key without a budget). */
  readonly spendUsd: number;
  /** The period's budget in USD; undefined = no budget (no budget gauges for the key). */
  readonly budgetUsd?: number | undefined;
}

/** Reads every key's spend; called on each scrape, so it should answer from memory or one store round trip. */
export interface KeySpendSource {
  snapshot(): Promise<readonly KeySpend[]>;
}
