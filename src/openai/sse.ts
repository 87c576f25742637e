/**
 * The one SSE encoder. OpenAI streams are `data: <json>\n\n` frames ending with
 * `data: [DONE]\n\n`. An error after the first byte is sent as a single `data: {"error":{…}}` frame and the stream
 * then closes without `[DONE]`: that is the shape openai-node's stream reader and opencode's `parseStreamError` read
 *.
 */
import { toOpenAIError } from "./error-body.js";

/** The terminating frame of a successful stream. */
export const SSE_DONE = "data: [DONE]\n\n";

/** Encodes one value as an SSE data frame. JSON never contains a raw newline, so one `data:` line suffices. */
export function encodeSseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** Encodes anything thrown as the OpenAI error frame (`data: {"error":{message,type,param,code}}`). */
export function encodeSseError(error: unknown): string {
  return encodeSseData(toOpenAIError(error).body);
}

/** Options for {@link toSseBody}. */
export interface SseBodyOptions {
  /** Called once with the error before its frame is written (for logging); the error is not rethrown. */
  onError?: (error: unknown) => void;
  /** Called once, first thing, when the reader cancels the body (the client went away). */
  onCancel?: (reason: unknown) => void;
  /** Called once when the body is over: last frame enqueued, or canceled and the source released. */
  onEnd?: () => void;
}

/**
 * Encodes a chunk stream as the exact bytes the client receives: one frame per chunk, then `[DONE]`; if the source
 * throws, the frames already produced, then the error frame, then the end (no `[DONE]`). It is a pull-driven web
 * `ReadableStream` for the HTTP edge.
 * Each read pulls one chunk from the source and enqueues its frame, so the writer's backpressure reaches the source
 * and there is no intermediate TransformStream or async generator per frame. Cancelling the body calls `onCancel`,
 * then the source's `return()`, so the backend turn is released in its `finally`.
 */
export function toSseBody(chunks: AsyncIterable<unknown>, options: SseBodyOptions = {}): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let canceled = false;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    options.onEnd?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let frame: string;
        let last = false;
        try {
          const result = await iterator.next();
          last = result.done === true;
          frame = last ? SSE_DONE : encodeSseData(result.value);
        } catch (error) {
          options.onError?.(error);
          frame = encodeSseError(error);
          last = true;
        }
        // A cancel while the source was being read: the body is gone, nothing may be enqueued.
        if (canceled) return;
        controller.enqueue(encoder.encode(frame));
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
