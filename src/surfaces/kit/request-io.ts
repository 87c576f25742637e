/**
 * Watching a turn's events for the access log (time to first token, token counts); the drivers call it per event.
 * Watching the client for going away before its answer is complete.
 */
import { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "hono";
import type { BackendEvent } from "../../backend/types.js";
import type { RequestLog } from "./access-log.js";

/**
 * Calls `onGone` when the client goes away before its answer is complete; returns what stops watching. Under the
 * Node listener (`c.env` holds Node's request and response, server/listen.ts) it listens where @hono/node-server
 * decides to abort `c.req.raw.signal`, with the adapter's test: the response closed before it finished, or the
 * request failed. Reading that signal makes the adapter build an AbortController and its listener map for the request
 * (about 1.6 KB per request). Anywhere else (`app.request()`) it listens to the signal.
 */
export function watchClientGone(c: Context, onGone: () => void): () => void {
  const env = c.env as { incoming?: unknown; outgoing?: unknown } | undefined;
  const incoming = env?.incoming;
  const outgoing = env?.outgoing;
  if (incoming instanceof IncomingMessage && outgoing instanceof ServerResponse) {
    const gone = () => Boolean(incoming.errored) || !outgoing.writableFinished;
    // A client that left while the request was read or its model resolved: the response closed before this watch.
    if (outgoing.closed) {
      if (gone()) onGone();
      return () => {};
    }
    const onClose = () => {
      if (gone()) onGone();
    };
    outgoing.once("close", onClose);
    return () => outgoing.off("close", onClose);
  }
  const signal = c.req.raw.signal;
  if (signal.aborted) {
    onGone();
    return () => {};
  }
  signal.addEventListener("abort", onGone, { once: true });
  return () => signal.removeEventListener("abort", onGone);
}

/**
 * The watch that teaches the access log time-to-first-token (the first text, reasoning or tool argument), token
 * counts, the characters of output handed out, the web searches and fetches Cursor ran, and those it asked for that
 * the request offered no tool for. Passed to the kit's drivers (translate.ts).
 */
export function watchTurn(log: RequestLog, now: () => number): (event: BackendEvent) => void {
  return (event) => {
    if (
      log.firstTokenAt === undefined &&
      (event.type === "text-delta" || event.type === "reasoning-delta" || event.type === "tool-call-delta")
    ) {
      log.firstTokenAt = now();
    }
    if (event.type === "text-delta" || event.type === "reasoning-delta") {
      log.outputChars = (log.outputChars ?? 0) + event.text.length;
    } else if (event.type === "tool-call") log.outputChars = (log.outputChars ?? 0) + event.arguments.length;
    else if ((event.type === "web-search" || event.type === "web-fetch") && event.offered === false) {
      log.webRefused = (log.webRefused ?? 0) + 1;
    } else if (event.type === "usage") {
      log.tokens = event.usage.totalTokens;
      log.usage = event.usage;
    } else if (event.type === "web-search" && event.status === "completed")
      log.webSearches = (log.webSearches ?? 0) + 1;
    else if (event.type === "web-fetch" && event.status === "completed") log.webFetches = (log.webFetches ?? 0) + 1;
  };
}
