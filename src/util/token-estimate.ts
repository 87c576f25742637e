/**
 * The bridge's one rule of thumb for tokens it cannot count exactly: English text averages about 4 characters a
 * token. The gateway's worst case and cut-turn bill (gateway/limits), the kit's output cap (surfaces/kit) and the
 * context-overflow estimate (backend/turn-errors.ts) all use it, so what the cap lets out is what the bill counts.
 */

/** Characters per token of every estimate. */
export const CHARS_PER_TOKEN = 4;
