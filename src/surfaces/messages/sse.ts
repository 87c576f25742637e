/**
 * SSE encoding for the Messages API: every event is `event: <type>\ndata: <json>\n\n`. While the source is silent
 * for `pingIntervalMs` a `ping` event is written (Anthropic does the same, and it keeps proxies and clients with idle
 * timeouts from cutting a long thinking pause). An error after the first byte becomes one `event: error` frame with
 * Anthropic's error body, then the stream closes.
 */
import { namedEventFrame, type PullBodyOptions, pullBody } from "../../util/pull-body.js";
import { toAnthropicError } from "./error-body.js";
import type { StreamEvent } from "./wire.js";

/** Encodes anything thrown as the `event: error` frame. */
export function encodeErrorEvent(error: unknown): string {
  return namedEventFrame(toAnthropicError(error).body);
}

export interface AnthropicSseOptions extends PullBodyOptions {
  /** Silence after which a `ping` is written; 0 disables pings. */
  pingIntervalMs: number;
}

const PING = namedEventFrame({ type: "ping" });

/**
 * Encodes the event stream as a pull-driven body (see util/pull-body.ts: backpressure reaches the source). A read that
 * waits longer than the ping interval yields a ping and keeps waiting on the same pending event. Cancelling the body
 * calls `onCancel`, then the source's `return()`, so the turn is released.
 */
export function toAnthropicSseBody(
  events: AsyncIterable<StreamEvent>,
  options: AnthropicSseOptions,
): ReadableStream<Uint8Array> {
  const iterator = events[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<StreamEvent>> | undefined;
  const waitOrPing = (next: Promise<IteratorResult<StreamEvent>>) => {
    if (options.pingIntervalMs <= 0) return next;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ping = new Promise<"ping">((resolve) => {
      timer = setTimeout(() => resolve("ping"), options.pingIntervalMs);
    });
    return Promise.race([next, ping]).finally(() => clearTimeout(timer));
  };
  return pullBody(
    {
      read: async () => {
        pending ??= iterator.next();
        const result = await waitOrPing(pending);
        if (result === "ping") return { frame: PING, last: false };
        pending = undefined;
        return result.done === true ? { frame: "", last: true } : { frame: namedEventFrame(result.value), last: false };
      },
      errorFrame: (error) => {
        pending = undefined;
        return encodeErrorEvent(error);
      },
      release: async () => iterator.return?.(),
    },
    options,
  );
}
