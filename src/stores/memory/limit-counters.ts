/**
 * The in-memory {@link LimitCounters} of one instance: per key, the start times of the requests of the last window,
 * the end times and token counts of the requests that finished in it (with their running sum), and the parallel
 * slots in use. Everything runs synchronously inside `admit`, so decisions are atomic within the process, and each
 * call costs the same however busy the key is (entries leave from the front; nothing is copied). Keys idle for a
 * window are dropped.
 */
import type { AdmitInput, LimitCounters, WindowState } from "../types.js";

interface KeyWindow {
  /** Request start times, oldest first. */
  requests: number[];
  /** Finished requests: end times and tokens, oldest first (two arrays, so nothing is allocated per entry). */
  tokenTimes: number[];
  tokenCounts: number[];
  /**
   * The slot ids of those requests, in order and as a set: a settle retried finds its own in the set and counts
   * nothing (a walk over the array cost a busy key's every settle O(requests in the window)).
   */
  tokenIds: string[];
  tokenIdSet: Set<string>;
  tokenSum: number;
  /** slot id → lease expiry (epoch ms). */
  slots: Map<string, number>;
}

/** The memory implementation (one instance; use the Redis one to share limits between instances). */
export function createMemoryLimitCounters(): LimitCounters {
  const keys = new Map<string, KeyWindow>();
  const windowOf = (keyId: string): KeyWindow => {
    let window = keys.get(keyId);
    if (window === undefined) {
      window = {
        requests: [],
        tokenTimes: [],
        tokenCounts: [],
        tokenIds: [],
        tokenIdSet: new Set(),
        tokenSum: 0,
        slots: new Map(),
      };
      keys.set(keyId, window);
    }
    return window;
  };
  const prune = (window: KeyWindow, now: number, windowMs: number) => {
    const from = now - windowMs;
    while ((window.requests[0] ?? Number.POSITIVE_INFINITY) <= from) window.requests.shift();
    while ((window.tokenTimes[0] ?? Number.POSITIVE_INFINITY) <= from) {
      window.tokenTimes.shift();
      const id = window.tokenIds.shift();
      if (id !== undefined) window.tokenIdSet.delete(id);
      window.tokenSum -= window.tokenCounts.shift() ?? 0;
    }
    for (const [slot, expiry] of window.slots) if (expiry <= now) window.slots.delete(slot);
  };
  const dropIfIdle = (keyId: string, window: KeyWindow) => {
    if (window.requests.length === 0 && window.tokenTimes.length === 0 && window.slots.size === 0) keys.delete(keyId);
  };
  /** End of the entry whose leaving brings the token window under `tpm`. */
  const freeingTokens = (window: KeyWindow, tpm: number): number | undefined => {
    let left = window.tokenSum;
    for (let i = 0; i < window.tokenTimes.length; i++) {
      left -= window.tokenCounts[i] ?? 0;
      if (left < tpm) return window.tokenTimes[i];
    }
    return undefined;
  };
  return {
    async admit(input: AdmitInput): Promise<WindowState> {
      const window = windowOf(input.keyId);
      prune(window, input.now, input.windowMs);
      const used = window.tokenSum;
      let refused: WindowState["refused"];
      if (input.rpm > 0 && window.requests.length >= input.rpm) refused = "rpm";
      else if (input.tpm > 0 && used >= input.tpm) refused = "tpm";
      else if (input.maxParallel > 0 && window.slots.size >= input.maxParallel) refused = "parallel";
      if (refused === undefined) {
        if (input.rpm > 0) window.requests.push(input.now);
        if (input.maxParallel > 0) window.slots.set(input.slotId, input.now + input.leaseMs);
      }
      const { requests, tokenTimes } = window;
      const state: WindowState = {
        refused,
        requestCount: requests.length,
        newestRequestAt: requests.at(-1),
        freeingRequestAt: refused === "rpm" ? requests[requests.length - input.rpm] : undefined,
        tokensUsed: used,
        newestTokensAt: tokenTimes.at(-1),
        freeingTokensAt: refused === "tpm" ? freeingTokens(window, input.tpm) : undefined,
        inFlight: window.slots.size,
      };
      dropIfIdle(input.keyId, window);
      return state;
    },
    async settle(keyId, slotId, tokens, now, windowMs) {
      const window = windowOf(keyId);
      window.slots.delete(slotId);
      if (tokens > 0 && !window.tokenIdSet.has(slotId)) {
        window.tokenIds.push(slotId);
        window.tokenIdSet.add(slotId);
        window.tokenTimes.push(now);
        window.tokenCounts.push(tokens);
        window.tokenSum += tokens;
      }
      prune(window, now, windowMs);
      dropIfIdle(keyId, window);
    },
    async renew(keyId, slotIds, now, leaseMs) {
      const slots = keys.get(keyId)?.slots;
      if (slots === undefined) return;
      for (const slot of slotIds) {
        const expiry = slots.get(slot);
        if (expiry !== undefined && expiry > now) slots.set(slot, now + leaseMs);
      }
    },
  };
}
