/**
 * The one SSE encoder. OpenAI streams are `data: <json>\n\n` frames ending with
 * `data: [DONE]\n\n`. An error after the first byte is sent as a single `data: {"error":{…}}` frame and the stream
 * then closes without `[DONE]`: that is the shape openai-node's stream reader and opencode's `parseStreamError` read
 *.
 */
import { type PullBodyOptions, type PulledFrame, pullBody } from "../../util/pull-body.js";
import { toOpenAIError } from "./openai-error.js";

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

function toFrame(result: IteratorResult<unknown>): PulledFrame {
  return result.done === true ? { frame: SSE_DONE, last: true } : { frame: encodeSseData(result.value), last: false };
}

/** Callbacks of {@link toSseBody} (shared by every streaming surface). */
export type SseBodyOptions = PullBodyOptions;

/**
 * Encodes a chunk stream as the exact bytes the client receives: one frame per chunk, then `[DONE]`; if the source
 * throws, the frames already produced, then the error frame, then the end (no `[DONE]`). Pull-driven (see
 * util/pull-body.ts): cancelling the body calls `onCancel`, then the source's `return()`, so the backend turn is
 * released in its `finally`.
 */
export function toSseBody(chunks: AsyncIterable<unknown>, options: SseBodyOptions = {}): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return pullBody(
    {
      // Not `async`: one promise per frame (the iterator's), none of an async function's own.
      read: () => iterator.next().then(toFrame),
      errorFrame: encodeSseError,
      release: async () => iterator.return?.(),
    },
    options,
  );
}
