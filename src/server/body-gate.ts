/**
 * Admission of large request bodies. Each large request costs several times its body size while it is parsed,
 * translated, fingerprinted, encoded and answered, so many of them at once multiply the server's peak memory (30
 * concurrent 3.9 MB requests once peaked at 2.4 GB). Requests whose body is at least `thresholdBytes` (counted as it
 * arrived, by `limitBody`, so chunked and declared lengths are alike) have read their body first (so Node's request
 * timeout never fires on a queued request), then wait, first come first served,
 * until the bodies being processed add up to no more than `budgetBytes`; the one at the head of the queue is always
 * admitted when nothing else runs, so a body larger than the budget still gets through, alone. Small requests never
 * wait. A request holds its admission until its handler has produced the response (a streamed one: until the turn
 * is set up and the first event is ready), then the next waiting request goes.
 *
 * A long non-streaming turn holding the budget would otherwise hold every large request behind it for as long as it
 * runs, so a waiter whose {@link LARGE_BODY_MAX_WAIT_MS} is up may be admitted over the budget (counted in it, so
 * those after it still wait for it), but only one such request at a time: memory stays within the budget plus one
 * request, and a request stuck behind one long turn goes after 2 s. Under a steady stream of large requests (every
 * waiter overdue) they go one over-budget request at a time, in order, so the wait is bounded by the turns ahead of
 * it rather than by the longest one.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { ProxyError } from "../util/errors.js";
import { countedBodyBytes } from "./body-limit.js";

/** Defaults: bodies from 1 MiB on are admitted within an 8 MiB budget. */
export const LARGE_BODY_THRESHOLD_BYTES = 1024 * 1024;
export const LARGE_BODY_BUDGET_BYTES = 8 * 1024 * 1024;
/** The longest a large request waits for admission. */
export const LARGE_BODY_MAX_WAIT_MS = 2_000;

/** A byte budget shared by the large requests in flight. */
export interface BodyGate {
  /** Resolves with the release function once `bytes` fit in the budget; rejects when `signal` aborts first. */
  acquire(bytes: number, signal?: AbortSignal): Promise<() => void>;
  /** Bytes admitted right now, and requests waiting (diagnostics and tests). */
  readonly inUse: number;
  readonly waiting: number;
}

interface Waiter {
  cost: number;
  /** Waited {@link LARGE_BODY_MAX_WAIT_MS}: may be admitted over the budget. */
  overdue: boolean;
  admit: (overBudget: boolean) => void;
}

/** Creates a first-come-first-served byte budget whose waiters wait at most `maxWaitMs`. */
export function createBodyGate(budgetBytes: number, maxWaitMs = LARGE_BODY_MAX_WAIT_MS): BodyGate {
  let inUse = 0;
  /** Whether a request admitted over the budget (its wait was up) is in flight: at most one is. */
  let overdueInFlight = false;
  const queue: Waiter[] = [];
  const drain = () => {
    for (let head = queue[0]; head !== undefined; head = queue[0]) {
      if (inUse > 0 && inUse + head.cost > budgetBytes) break;
      queue.shift();
      head.admit(false);
    }
    // The longest-waiting overdue request takes the one over-budget place when it is free.
    if (!overdueInFlight) {
      const overdue = queue.find((waiter) => waiter.overdue);
      if (overdue !== undefined) {
        queue.splice(queue.indexOf(overdue), 1);
        overdue.admit(true);
      }
    }
  };
  const releaseOf = (cost: number, overBudget: boolean) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inUse -= cost;
      if (overBudget) overdueInFlight = false;
      drain();
    };
  };
  return {
    acquire(bytes, signal) {
      const cost = Math.max(0, Math.min(bytes, budgetBytes));
      if (queue.length === 0 && (inUse === 0 || inUse + cost <= budgetBytes)) {
        inUse += cost;
        return Promise.resolve(releaseOf(cost, false));
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          cost,
          overdue: false,
          admit: (overBudget) => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            inUse += cost;
            if (overBudget) overdueInFlight = true;
            resolve(releaseOf(cost, overBudget));
          },
        };
        // Time is up: this request may go over the budget, once the one over-budget place is free.
        const timer = setTimeout(() => {
          waiter.overdue = true;
          drain();
        }, maxWaitMs);
        const onAbort = () => {
          clearTimeout(timer);
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          drain();
          reject(new ProxyError("canceled", "The client disconnected while its request waited to be processed."));
        };
        if (signal?.aborted === true) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(waiter);
      });
    },
    get inUse() {
      return inUse;
    },
    get waiting() {
      return queue.length;
    },
  };
}

/**
 * Two {@link createBodyGate} lanes, split at half the budget: bodies under it (1–4 MiB by default) and bodies of
 * half the budget or more each have their own budget, so a smaller body never queues behind larger ones (a 2 MB
 * request behind two long turns of 19 MB bodies goes at once instead of after one of them ends). Memory stays
 * within twice the budget plus one over-budget request per lane. Within a lane the rules of
 * {@link createBodyGate} hold: a request waits at most {@link LARGE_BODY_MAX_WAIT_MS}, unless its lane's one
 * over-budget place is taken, and then until a request of its lane ahead of it is done.
 */
export function createLanedBodyGate(budgetBytes: number, maxWaitMs = LARGE_BODY_MAX_WAIT_MS): BodyGate {
  const smaller = createBodyGate(budgetBytes, maxWaitMs);
  const larger = createBodyGate(budgetBytes, maxWaitMs);
  return {
    acquire: (bytes, signal) => (bytes * 2 < budgetBytes ? smaller : larger).acquire(bytes, signal),
    get inUse() {
      return smaller.inUse + larger.inUse;
    },
    get waiting() {
      return smaller.waiting + larger.waiting;
    },
  };
}

/**
 * The middleware, mounted after {@link limitBody} (which has read the body, counting its bytes whatever the framing):
 * a POST whose body is at least `thresholdBytes` waits for admission and holds it while the handler runs. The body
 * stays in hono's request cache only until the handler reads it (`readJson` drops the cached text, so the text and
 * the parsed object are not both held for the turn).
 */
export function admitLargeBodies(gate: BodyGate, thresholdBytes = LARGE_BODY_THRESHOLD_BYTES): MiddlewareHandler {
  const admitted = async (c: Context, next: Next, bytes: number): Promise<void> => {
    const release = await gate.acquire(bytes, c.req.raw.signal);
    try {
      await next();
    } finally {
      release();
    }
  };
  // A small body passes straight on: no frame of this guard to resume on the way back to the answer's first byte.
  return (c, next) => {
    const bytes = countedBodyBytes(c);
    return bytes < thresholdBytes ? next() : admitted(c, next, bytes);
  };
}
