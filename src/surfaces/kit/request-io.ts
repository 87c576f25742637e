/** Watching a turn's events for the access log (time to first token, token counts). */
import type { BackendEvent } from "../../backend/types.js";
import type { RequestLog } from "./access-log.js";

/**
 * Wraps the events so the access log learns time-to-first-token and token counts. A plain iterator rather than an
 * async generator: this sits on the per-event hot path, and a generator layer costs several promise hops per event
 * (and `return()` reaches the engine's stream even before the first pull).
 */
export function observe(
  events: AsyncIterable<BackendEvent>,
  log: RequestLog,
  now: () => number,
): AsyncIterable<BackendEvent> {
  const record = (result: IteratorResult<BackendEvent>): IteratorResult<BackendEvent> => {
    if (result.done === true) return result;
    const event = result.value;
    if (log.firstTokenAt === undefined && (event.type === "text-delta" || event.type === "reasoning-delta")) {
      log.firstTokenAt = now();
    }
    if (event.type === "usage") {
      log.tokens = event.usage.totalTokens;
      log.usage = event.usage;
    } else if (event.type === "web-search" && event.status === "completed")
      log.webSearches = (log.webSearches ?? 0) + 1;
    else if (event.type === "web-fetch" && event.status === "completed") log.webFetches = (log.webFetches ?? 0) + 1;
    return result;
  };
  return {
    [Symbol.asyncIterator]: () => {
      const iterator = events[Symbol.asyncIterator]();
      return {
        next: () => iterator.next().then(record),
        return: async (value?: unknown) => (await iterator.return?.(value)) ?? { done: true, value: undefined },
      };
    },
  };
}
