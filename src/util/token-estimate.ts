/**
 * The bridge's one rule of thumb for tokens it cannot count exactly: English text averages about 4 characters a
 * token. The gateway's worst case and cut-turn bill (gateway/limits), the kit's output cap (surfaces/kit) and the
 * context-overflow estimate (backend/turn-errors.ts) all use it, so what the cap lets out is what the bill counts.
 */

/** Characters per token of every estimate. */
export const CHARS_PER_TOKEN = 4;

/** Tokens assumed per image (a large image, as the providers count it). */
export const IMAGE_TOKENS = 1600;

/** Characters of text and the number of images in a value (binary data counts as an image). */
function measure(value: unknown, into: { chars: number; images: number }, depth: number): void {
  if (typeof value === "string") into.chars += value.length;
  else if (typeof value === "number" || typeof value === "boolean") into.chars += 4;
  else if (value instanceof Uint8Array) into.images += 1;
  else if (Array.isArray(value)) for (const item of value) measure(item, into, depth + 1);
  else if (typeof value === "object" && value !== null && depth < 64) {
    for (const [name, item] of Object.entries(value)) {
      into.chars += name.length;
      measure(item, into, depth + 1);
    }
  }
}

/**
 * Tokens of a value by estimate: every string, number and key at {@link CHARS_PER_TOKEN} characters a token, every
 * binary part (an image) at {@link IMAGE_TOKENS}. An upper bound for a request's input (its keys and framing count):
 * what the gateway reserves for a turn and bills a cut one by, and what the kit reports as a cut answer's input.
 */
export function estimateTokensOf(value: unknown): number {
  const sizes = { chars: 0, images: 0 };
  measure(value, sizes, 0);
  return Math.ceil(sizes.chars / CHARS_PER_TOKEN) + sizes.images * IMAGE_TOKENS;
}
