/**
 * The one SSE encoding of the OpenAI chat stream (the kit's driver, translate.ts, writes the body). OpenAI streams are `data: <json>\n\n` frames ending with
 * `data: [DONE]\n\n`. An error after the first byte is sent as a single `data: {"error":{…}}` frame and the stream
 * then closes without `[DONE]`: that is the shape openai-node's stream reader and opencode's `parseStreamError` read
 *.
 */
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
