/**
 * SSE encoding for the Messages API: every event is `event: <type>\ndata: <json>\n\n`. While the source is silent
 * for `pingIntervalMs` a `ping` event is written (Anthropic does the same, and it keeps proxies and clients with idle
 * timeouts from cutting a long thinking pause). An error after the first byte becomes one `event: error` frame with
 * Anthropic's error body, then the stream closes.
 */
import { toAnthropicError } from "./error-body.js";
import type { StreamEvent } from "./response.js";

/** Encodes one event as its SSE frame. JSON never contains a raw newline, so one `data:` line suffices. */
export function encodeEvent(event: { type: string }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Encodes anything thrown as the `event: error` frame. */
export function encodeErrorEvent(error: unknown): string {
  return encodeEvent(toAnthropicError(error).body);
}

export interface AnthropicSseOptions {
  /** Silence after which a `ping` is written; 0 disables pings. */
  pingIntervalMs: number;
  /** Called once with the error before its frame is written (for logging); the error is not rethrown. */
  onError?: (error: unknown) => void;
  /** Called once, first thing, when the reader cancels the body (the client went away). */
  onCancel?: (reason: unknown) => void;
  /** Called once when the body is over: last frame enqueued, or canceled and the source released. */
  onEnd?: () => void;
}

const PING = encodeEvent({ type: "ping" });

/**
 * Encodes the event stream as a pull-driven web `ReadableStream` (backpressure reaches the source). A read that
 * waits longer than the ping interval yields a ping and keeps waiting on the same pending event. Cancelling the body
 * calls `onCancel`, then the source's `return()`, so the turn is released.
 */
export function toAnthropicSseBody(
  events: AsyncIterable<StreamEvent>,
  options: AnthropicSseOptions,
): ReadableStream<Uint8Array> {
  const iterator = events[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let pending: Promise<IteratorResult<StreamEvent>> | undefined;
  let canceled = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    options.onEnd?.();
  };
  const waitOrPing = (next: Promise<IteratorResult<StreamEvent>>) => {
    if (options.pingIntervalMs <= 0) return next;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ping = new Promise<"ping">((resolve) => {
      timer = setTimeout(() => resolve("ping"), options.pingIntervalMs);
    });
    return Promise.race([next, ping]).finally(() => clearTimeout(timer));
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let frame: string;
        let last = false;
        try {
          pending ??= iterator.next();
          const result = await waitOrPing(pending);
          if (result === "ping") {
            frame = PING;
          } else {
            pending = undefined;
            last = result.done === true;
            frame = last ? "" : encodeEvent(result.value);
          }
        } catch (error) {
          pending = undefined;
          options.onError?.(error);
          frame = encodeErrorEvent(error);
          last = true;
        }
        if (canceled) return;
        if (frame !== "") controller.enqueue(encoder.encode(frame));
        if (last) {
          controller.close();
          end();
        }
      },
      async cancel(reason) {
        canceled = true;
        options.onCancel?.(reason);
        try {
          await iterator.return?.();
        } finally {
          end();
        }
      },
    },
    { highWaterMark: 0 },
  );
}
