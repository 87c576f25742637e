/**
 * The team gateway's limits for `serve` (src/gateway/limits): counters in memory and spend in
 * `<data dir>/spend.json` for one instance, both in Redis when `--store` is shared (so the instances enforce one
 * limit together). They act only on requests the gateway's auth gave a principal (a virtual key). Settles that fail
 * (the store is down) wait in `<data dir>/pending-settles.json` until the store takes them.
 */
import type { BridgeConfig } from "../config/index.js";
import { createLimits, type Limits, priceRules } from "../gateway/limits/index.js";
import { createFileSettleQueue } from "../stores/file/settle-queue.js";
import { createFileSpendStore } from "../stores/file/spend-store.js";
import { createMemoryLimitCounters } from "../stores/memory/limit-counters.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { Logger } from "../util/logger.js";

/** The limits on the instance's stores; `client` is the shared store's (namespaced) connection, if any. */
export async function openLimits(
  config: BridgeConfig,
  dataDir: string,
  client: StoreClient | undefined,
  logger: Logger,
): Promise<Limits> {
  const common = {
    logger: logger.child({ component: "gateway" }),
    prices: priceRules(config.prices),
    warnAt: config.budgetWarnPercent / 100,
    queue: createFileSettleQueue({ dataDir }),
  };
  if (client === undefined) {
    return createLimits({
      ...common,
      counters: createMemoryLimitCounters(),
      spend: createFileSpendStore({ dataDir, logger: common.logger }),
    });
  }
  const [{ createRedisLimitCounters }, { createRedisSpendStore }] = await Promise.all([
    import("../stores/redis/limit-counters.js"),
    import("../stores/redis/spend-store.js"),
  ]);
  return createLimits({ ...common, counters: createRedisLimitCounters(client), spend: createRedisSpendStore(client) });
}
