/**
 * The in-memory {@link LimitCounters} of one instance: per key, the start times of the requests of the last window,
 * the token counts of the requests that finished in it, and the parallel slots in use. Everything runs synchronously
 * inside `admit`, so decisions are atomic within the process. Keys idle for a window are dropped.
 */
import type { AdmitInput, LimitCounters, WindowState } from "../types.js";

interface KeyWindow {
  requests: Array<[number, string]>;
  tokens: Array<[number, number]>;
  /** slot id → lease expiry (epoch ms). */
  slots: Map<string, number>;
}

/** The memory implementation (one instance; use the Redis one to share limits between instances). */
export function createMemoryLimitCounters(): LimitCounters {
  const keys = new Map<string, KeyWindow>();
  const windowOf = (keyId: string): KeyWindow => {
    let window = keys.get(keyId);
    if (window === undefined) {
      window = { requests: [], tokens: [], slots: new Map() };
      keys.set(keyId, window);
    }
    return window;
  };
  const prune = (window: KeyWindow, now: number, windowMs: number) => {
    const from = now - windowMs;
    while ((window.requests[0]?.[0] ?? Number.POSITIVE_INFINITY) <= from) window.requests.shift();
    while ((window.tokens[0]?.[0] ?? Number.POSITIVE_INFINITY) <= from) window.tokens.shift();
    for (const [slot, expiry] of window.slots) if (expiry <= now) window.slots.delete(slot);
  };
  const dropIfIdle = (keyId: string, window: KeyWindow) => {
    if (window.requests.length === 0 && window.tokens.length === 0 && window.slots.size === 0) keys.delete(keyId);
  };
  return {
    async admit(input: AdmitInput): Promise<WindowState> {
      const window = windowOf(input.keyId);
      prune(window, input.now, input.windowMs);
      const used = window.tokens.reduce((sum, [, tokens]) => sum + tokens, 0);
      let refused: WindowState["refused"];
      if (input.rpm > 0 && window.requests.length >= input.rpm) refused = "rpm";
      else if (input.tpm > 0 && used >= input.tpm) refused = "tpm";
      else if (input.maxParallel > 0 && window.slots.size >= input.maxParallel) refused = "parallel";
      if (refused === undefined) {
        if (input.rpm > 0) window.requests.push([input.now, input.slotId]);
        if (input.maxParallel > 0) window.slots.set(input.slotId, input.now + input.leaseMs);
      }
      const state: WindowState = {
        refused,
        requests: window.requests.map(([at]) => at),
        tokens: window.tokens.map(([at, tokens]) => [at, tokens]),
        inFlight: window.slots.size,
      };
      dropIfIdle(input.keyId, window);
      return state;
    },
    async settle(keyId, slotId, tokens, now, windowMs) {
      const window = windowOf(keyId);
      window.slots.delete(slotId);
      if (tokens > 0) window.tokens.push([now, tokens]);
      prune(window, now, windowMs);
      dropIfIdle(keyId, window);
    },
  };
}
