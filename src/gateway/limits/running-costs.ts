/**
 * The cost so far of the requests this instance is running, handed to the spend store every
 * {@link RUNNING_NOTE_MS} while some run (SpendStore.noteRunning), so a store that records it (the file store in
 * its next write of spend.json, Redis in a hash beside the spend) still charges them after a crash. Each request is estimated as a turn cut at that
 * moment would be billed (limits.ts, cutTurnUsage): its input as the worst case counts it and the output handed out so
 * far. No store work per request: holding and releasing a request are a map entry; the store writes once per round.
 */
import type { RunningCost, SpendStore, SpendTotals } from "../../stores/types.js";

/** How often the running requests' costs are handed to the store while some run. */
export const RUNNING_NOTE_MS = 2_000;

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
  /** Hands the store what runs now (the timer calls it; shutdown once more). */
  noteNow(): void;
  close(): void;
}

/** Notes the running requests' costs to `spend`; inert when the store records none. */
export function createRunningCosts(spend: SpendStore, noteMs = RUNNING_NOTE_MS): RunningCosts {
  const running = new Map<string, Running>();
  let timer: NodeJS.Timeout | undefined;
  const noteNow = () => {
    const costs: RunningCost[] = [];
    for (const [id, { keyId, period, estimate }] of running) {
      const entry = estimate();
      if (entry !== undefined && entry.microUsd > 0) costs.push({ id, keyId, period, entry });
    }
    spend.noteRunning?.(costs);
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    hold(id, keyId, period, estimate) {
      if (spend.noteRunning === undefined) return;
      running.set(id, { keyId, period, estimate });
      if (timer === undefined) {
        timer = setInterval(noteNow, noteMs);
        timer.unref();
      }
    },
    release(id) {
      if (!running.delete(id) || running.size > 0) return;
      stop();
    },
    noteNow,
    close: stop,
  };
}
