/** Watching a turn's events for the access log (time to first token, token counts); the drivers call it per event. */
import type { BackendEvent } from "../../backend/types.js";
import type { RequestLog } from "./access-log.js";

/**
 * The watch that teaches the access log time-to-first-token (the first text, reasoning or tool argument), token
 * counts, the web searches and fetches Cursor ran, and those it asked for that the request offered no tool for. Passed to the kit's drivers (translate.ts).
 */
export function watchTurn(log: RequestLog, now: () => number): (event: BackendEvent) => void {
  return (event) => {
    if (
      log.firstTokenAt === undefined &&
      (event.type === "text-delta" || event.type === "reasoning-delta" || event.type === "tool-call-delta")
    ) {
      log.firstTokenAt = now();
    }
    if ((event.type === "web-search" || event.type === "web-fetch") && event.offered === false) {
      log.webRefused = (log.webRefused ?? 0) + 1;
    } else if (event.type === "usage") {
      log.tokens = event.usage.totalTokens;
      log.usage = event.usage;
    } else if (event.type === "web-search" && event.status === "completed")
      log.webSearches = (log.webSearches ?? 0) + 1;
    else if (event.type === "web-fetch" && event.status === "completed") log.webFetches = (log.webFetches ?? 0) + 1;
  };
}
