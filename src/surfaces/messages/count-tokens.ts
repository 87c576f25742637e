/**
 * `POST /v1/messages/count_tokens`: an estimate, counted over the same text the bridge would send for the request
 * (instructions, every message's text, tool calls and results, tool definitions). Anthropic publishes no tokenizer
 * for its current models; the bridge counts with a general-purpose BPE vocabulary (o200k_base, see
 * `util/token-count.ts`: linear, exact up to 2 KiB runs without whitespace, sliced so other requests keep going).
 * Images count a flat {@link IMAGE_TOKENS} each (Anthropic's documented cost of an image near its 1.15 megapixel
 * size limit).
 */
import type { EngineRequest } from "../../engine/types.js";
import { loadTokenCounter, type TokenCounter } from "../../util/token-count.js";
import { IMAGE_TOKENS } from "../../util/token-estimate.js";

/** Flat estimate per image (the bridge's one figure, util/token-estimate.ts). */
export { IMAGE_TOKENS };

/** Per-message framing overhead (role markers), as chat tokenizers add. */
const MESSAGE_OVERHEAD = 3;

/** The texts the bridge would send for `request`, in order, and how many images it carries. */
export function countedTexts(request: EngineRequest): { texts: string[]; images: number } {
  const texts = [...request.instructions];
  let images = 0;
  for (const message of request.messages) {
    if (message.role === "system") texts.push(message.text);
    else if (message.role === "tool") texts.push(message.content);
    else if (message.role === "assistant") {
      texts.push(message.text, ...message.reasoning.map((block) => block.text));
      for (const call of message.toolCalls) texts.push(call.name, call.arguments);
    } else {
      for (const part of message.parts) {
        if (part.type === "text") texts.push(part.text);
        else images += 1;
      }
    }
  }
  for (const tool of request.tools) texts.push(tool.name, tool.description, JSON.stringify(tool.inputSchema));
  return { texts: texts.filter((text) => text !== ""), images };
}

function framing(request: EngineRequest, images: number): number {
  const messages = request.messages.length + (request.instructions.length > 0 ? 1 : 0);
  return images * IMAGE_TOKENS + messages * MESSAGE_OVERHEAD;
}

/**
 * The estimate: tokens of every counted text by the o200k_base counter (yielding to other requests while it counts),
 * plus images and per-message overhead.
 */
export async function countInputTokens(
  request: EngineRequest,
  counter: Promise<TokenCounter> = loadTokenCounter(),
): Promise<number> {
  const { texts, images } = countedTexts(request);
  return (await (await counter).count(texts)) + framing(request, images);
}
