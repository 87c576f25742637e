/**
 * The one SSE encoder (house-style habit 2). OpenAI streams are `data: <json>\n\n` frames ending with
 * `data: [DONE]\n\n`. An error after the first byte is sent as a single `data: {"error":{…}}` frame and the stream
 * then closes without `[DONE]`: that is the shape openai-node's stream reader and opencode's `parseStreamError` read
 * (house-style §3).
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

/** Options for {@link toSseStream}. */
export interface SseStreamOptions {
  /** Called once with the error before its frame is yielded (for logging); the error is not rethrown. */
  onError?: (error: unknown) => void;
}

/**
 * Encodes a chunk stream as the exact bytes (as text) the client receives: one frame per chunk, then `[DONE]`;
 * if the source throws, the frames already produced, then the error frame, then the end. Stopping the iteration
 * early (client abort) calls the source's `return()`, so the backend turn is released in its `finally`.
 */
export async function* toSseStream(
  chunks: AsyncIterable<unknown>,
  options: SseStreamOptions = {},
): AsyncIterable<string> {
  try {
    for await (const chunk of chunks) {
      yield encodeSseData(chunk);
    }
  } catch (error) {
    options.onError?.(error);
    yield encodeSseError(error);
    return;
  }
  yield SSE_DONE;
}
