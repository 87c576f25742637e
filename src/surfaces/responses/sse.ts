/**
 * SSE framing of the Responses API: every event is `event: <type>\ndata: <json>\n\n` and the stream simply ends
 * after the terminal event (no `[DONE]`). The chat encoder in `openai/sse.ts` always appends `[DONE]` and a chat
 * error frame, which Responses clients do not expect, so this is the Responses variant of the same pull-driven body:
 * one event per read, backpressure reaches the source, cancelling calls the source's `return()`.
 */

import { namedEventFrame, pullBody } from "../../util/pull-body.js";
import { toOpenAIError } from "../kit/openai-error.js";
import type { SseBodyOptions } from "../kit/sse.js";

/**
 * Encodes an event stream as the bytes the client receives. The translator turns backend failures into `error` and
 * `response.failed` events itself; an error that still escapes becomes one `error` event (sequence number -1 marks
 * it as out of band), then the end.
 */
export function toResponsesSseBody(
  events: AsyncIterable<{ type: string }>,
  options: SseBodyOptions = {},
): ReadableStream<Uint8Array> {
  const iterator = events[Symbol.asyncIterator]();
  return pullBody(
    {
      read: async () => {
        const result = await iterator.next();
        return result.done === true ? { frame: "", last: true } : { frame: namedEventFrame(result.value), last: false };
      },
      errorFrame: (error) => {
        const { code, message, param } = toOpenAIError(error).body.error;
        const event = { type: "error", sequence_number: -1, code, message, param };
        return namedEventFrame(event);
      },
      release: async () => iterator.return?.(),
    },
    options,
  );
}
