/**
 * The cost so far of the requests this instance is running, handed to the spend store every
 * {@link RUNNING_NOTE_MS} while some run (SpendStore.noteRunning), so a store that records it (the file store in
 * its next write of spend.json, Redis in a hash beside the spend) still charges them after a crash. Each request is estimated as a turn cut at that
 * moment would be billed (limits.ts, cutTurnUsage): its input as the worst case counts it and the output handed out so
 * far. No store work per request: holding and releasing a request are a map entry; the store writes once per round.
 *
 * On a store shared by several instances (SpendStore.chargeLapsed), every {@link LAPSED_SWEEP_MS} (and once at
 * start) this instance also charges the notes of any instance that died (their lease ran out): a key's spend, and so
 * its budget, /admin and /metrics, does not wait for that key's next request. At a stop, the requests still unsettled
 * are charged at once (SpendStore.chargeStopped), awaited before the store's connection closes.
 */
import type { RunningCost, SpendStore, SpendTotals } from "../../stores/types.js";
import type { Logger } from "../../util/logger.js";

/** How often the running requests' costs are handed to the store while some run. */
export const RUNNING_NOTE_MS = 2_000;

/** How often the notes of instances that died are looked for (a store call that reads nothing while none lapsed). */
export const LAPSED_SWEEP_MS = 5_000;

interface Running {
  keyId: string;
  period: string;
  /** The request's cost so far; undefined while it has none (nothing handed out yet). */
  estimate: () => SpendTotals | undefined;
}

/** The running requests and the timer noting them. */
export interface RunningCosts {
  hold(id: string, keyId: string, period: string, estimate: () => SpendTotals | undefined): void;
  release(id: string): void;
  /** Hands the store what runs now (the timer calls it). */
  noteNow(): void;
  /** Stops the timers. */
  close(): void;
  /**
   * Shutdown, once the settles under way are done: the requests still running end unsettled with this process.
   * Charged now on a shared store, else handed to the store to record at its close.
   */
  stopped(): Promise<void>;
}

/** Options of {@link createRunningCosts}. */
export interface RunningCostsOptions {
  logger: Logger;
  /** @default RUNNING_NOTE_MS */
  noteMs?: number;
  /** @default LAPSED_SWEEP_MS */
  sweepMs?: number;
}

/** Notes the running requests' costs to `spend`; inert when the store records none. */
export function createRunningCosts(spend: SpendStore, options: RunningCostsOptions): RunningCosts {
  const { logger } = options;
  const running = new Map<string, Running>();
  let timer: NodeJS.Timeout | undefined;
  const costsNow = () => {
    const costs: RunningCost[] = [];
    for (const [id, { keyId, period, estimate }] of running) {
      const entry = estimate();
      if (entry !== undefined && entry.microUsd > 0) costs.push({ id, keyId, period, entry });
    }
    return costs;
  };
  const noteNow = () => spend.noteRunning?.(costsNow());
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  let sweeping = false;
  const sweep = async () => {
    if (spend.chargeLapsed === undefined || sweeping) return;
    sweeping = true;
    try {
      const charged = await spend.chargeLapsed();
      if (charged > 0) logger.info("charged the running requests of an instance that stopped noting them", { charged });
    } catch (error) {
      // The store is down: the next sweep (or the key's next reservation) charges them.
      logger.debug("could not look for the running requests of instances that died", { error });
    } finally {
      sweeping = false;
    }
  };
  let sweeper: NodeJS.Timeout | undefined;
  if (spend.chargeLapsed !== undefined) {
    void sweep();
    sweeper = setInterval(() => void sweep(), options.sweepMs ?? LAPSED_SWEEP_MS);
    sweeper.unref();
  }
  return {
    hold(id, keyId, period, estimate) {
      if (spend.noteRunning === undefined) return;
      running.set(id, { keyId, period, estimate });
      if (timer === undefined) {
        timer = setInterval(noteNow, options.noteMs ?? RUNNING_NOTE_MS);
        timer.unref();
      }
    },
    release(id) {
      if (!running.delete(id) || running.size > 0) return;
      stop();
    },
    noteNow,
    close() {
      stop();
      if (sweeper !== undefined) clearInterval(sweeper);
      sweeper = undefined;
    },
    async stopped() {
      if (spend.chargeStopped === undefined) {
        noteNow();
        return;
      }
      const costs = costsNow();
      try {
        await spend.chargeStopped(costs);
      } catch (error) {
        // Their last periodic notes stay: charged once their lease runs out, by another instance or the next start.
        logger.warn("could not charge the requests still running at the stop; their last notes are charged later", {
          requests: costs.length,
          error,
        });
      }
    },
  };
}
