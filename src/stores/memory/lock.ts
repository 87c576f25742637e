/**
 * The in-process {@link StoreLock}: one holder at a time among the callers of this one lock, in call order. What the
 * Redis lock (redis/lock.ts) is across instances, for a store no other process shares.
 */
import type { StoreLock } from "../types.js";

/** Creates the lock. */
export function createMemoryLock(): StoreLock {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work);
    // The next holder waits for this one to settle, whether it resolved or threw.
    tail = run.catch(() => undefined);
    return run;
  };
}
