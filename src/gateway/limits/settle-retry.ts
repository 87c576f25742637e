/**
 * Settles that failed (the store was unreachable when a request ended) wait in a durable queue (the instance's
 * `pending-settles.json`, stores/file/settle-queue.ts) and are retried every {@link RETRY_MS} until the store takes
 * them, oldest first, so no cost is lost and no slot stays taken. Both halves are idempotent per request id (the
 * counters' slot release and token entry, the spend's settle), so a retry after a reply that was lost counts once.
 */
import type { LimitCounters, PendingSettle, SettleQueue, SpendStore, SpendTotals } from "../../stores/types.js";
import type { Logger } from "../../util/logger.js";
import { WINDOW_MS } from "./window.js";

/** How often the queue is retried while it holds something. */
export const RETRY_MS = 2000;

/** The settle of one request and the retry of those that failed. */
export interface Settler {
  /** Settles now; on failure queues it and rethrows. Resolves to the spend before and after (once per id). */
  settle(item: PendingSettle): Promise<{ before: SpendTotals; after: SpendTotals; applied: boolean }>;
  /** Retries what the queue holds (the timer calls it); resolves to how many were settled. */
  drain(): Promise<number>;
  close(): void;
}

/** The settler over the stores and the queue. */
export function createSettler(options: {
  counters: LimitCounters;
  spend: SpendStore;
  queue: SettleQueue;
  logger: Logger;
  retryMs?: number;
}): Settler {
  const { counters, spend, queue, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<number> | undefined;
  const once = async (item: PendingSettle) => {
    if (!item.countersDone) {
      await counters.settle(item.keyId, item.id, item.tokens, item.finishedAt, WINDOW_MS);
      item.countersDone = true;
    }
    return spend.settle({ keyId: item.keyId, period: item.period, id: item.id, entry: item.entry });
  };
  const drainOnce = async () => {
    let settled = 0;
    const items = await queue.list();
    for (const item of items) {
      try {
        await once(item);
      } catch {
        // Still unreachable: keep what is left (and what this one did) for the next round.
        if (item.countersDone) await queue.push(item).catch(() => undefined);
        break;
      }
      await queue.remove([item.id]);
      settled += 1;
    }
    if (settled > 0) logger.info("settled requests whose cost could not be recorded earlier", { settled });
    if ((await queue.list()).length === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
    return settled;
  };
  const drain = () => {
    draining ??= drainOnce().finally(() => {
      draining = undefined;
    });
    return draining;
  };
  const schedule = () => {
    if (timer !== undefined) return;
    timer = setInterval(() => void drain().catch(() => undefined), options.retryMs ?? RETRY_MS);
    timer.unref();
  };
  // Left by an earlier run of this instance: retried from the start.
  void queue
    .list()
    .then((items) => {
      if (items.length > 0) schedule();
    })
    .catch((error: unknown) => logger.warn("could not read the queue of unsettled requests", { error }));
  return {
    async settle(item) {
      try {
        return await once(item);
      } catch (error) {
        try {
          await queue.push(item);
          schedule();
          logger.warn("could not settle a request; it is queued and retried when the store is back", {
            error,
            request: item.id,
          });
        } catch (queueError) {
          // A queue that keeps what it could not save (the file one) still retries it while this process runs.
          if ((await queue.list().catch(() => [])).some((kept) => kept.id === item.id)) {
            schedule();
            logger.error(
              "could not settle a request, nor save it to the queue on disk; it is retried while this process runs",
              {
                error: queueError,
                request: item.id,
              },
            );
          } else logger.error("could not settle a request, nor queue it: its cost is lost", { error: queueError });
        }
        throw error;
      }
    },
    drain,
    close() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
