/**
 * Admission of large request bodies. Each large request costs several times its body size while it is parsed,
 * translated, fingerprinted, encoded and answered, so many of them at once multiply the server's peak memory (30
 * concurrent 3.9 MB requests once peaked at 2.4 GB). Requests whose declared body is at least `thresholdBytes` read
 * their body first (so Node's request timeout never fires on a queued request), then wait, first come first served,
 * until the bodies being processed add up to no more than `budgetBytes`; the one at the head of the queue is always
 * admitted when nothing else runs, so a body larger than the budget still gets through, alone. Small requests never
 * wait. A request holds its admission until its handler has produced the response (a streamed one: until the turn
 * is set up and the first event is ready), then the next waiting request goes.
 *
 * No request waits longer than {@link LARGE_BODY_MAX_WAIT_MS} because of others: a long non-streaming turn holding
 * the budget would otherwise hold every large request behind it for as long as it runs. A waiter whose time is up is
 * admitted over the budget (counted in it, so those after it still wait for it); the budget bounds memory in the
 * common case, the wait bound keeps one request from hurting the others.
 */
import type { MiddlewareHandler } from "hono";
import { ProxyError } from "../util/errors.js";

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
  admit: () => void;
}

/** Creates a first-come-first-served byte budget whose waiters wait at most `maxWaitMs`. */
export function createBodyGate(budgetBytes: number, maxWaitMs = LARGE_BODY_MAX_WAIT_MS): BodyGate {
  let inUse = 0;
  const queue: Waiter[] = [];
  const drain = () => {
    for (let head = queue[0]; head !== undefined; head = queue[0]) {
      if (inUse > 0 && inUse + head.cost > budgetBytes) return;
      queue.shift();
      head.admit();
    }
  };
  const releaseOf = (cost: number) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inUse -= cost;
      drain();
    };
  };
  return {
    acquire(bytes, signal) {
      const cost = Math.max(0, Math.min(bytes, budgetBytes));
      if (queue.length === 0 && (inUse === 0 || inUse + cost <= budgetBytes)) {
        inUse += cost;
        return Promise.resolve(releaseOf(cost));
      }
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          cost,
          admit: () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            inUse += cost;
            resolve(releaseOf(cost));
          },
        };
        // Time is up: admitted over the budget, whatever runs.
        const timer = setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at < 0) return;
          queue.splice(at, 1);
          waiter.admit();
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
 * The middleware: a POST whose declared `content-length` is at least `thresholdBytes` reads its body, waits for
 * admission and holds it while the handler runs. The body stays in hono's request cache only until the handler
 * reads it (`readJson` drops the cached text, so the text and the parsed object are not both held for the turn).
 */
export function admitLargeBodies(gate: BodyGate, thresholdBytes = LARGE_BODY_THRESHOLD_BYTES): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== "POST") return next();
    const declared = Number.parseInt(c.req.header("content-length") ?? "", 10);
    if (!(declared >= thresholdBytes)) return next();
    await c.req.text();
    const release = await gate.acquire(declared, c.req.raw.signal);
    try {
      await next();
    } finally {
      release();
    }
  };
}
