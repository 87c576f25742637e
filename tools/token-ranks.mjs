/**
 * The one BPE vocabulary cursor-bridge counts with (o200k_base, for `count_tokens`), extracted at build time from
 * js-tiktoken's ranks module into `dist/o200k_base.tokens`, so the installed bridge carries 1.6 MB of it instead of
 * js-tiktoken's 22 MB of every encoding. The file: one line of JSON (`{"pat_str": …, "tokens": N}`, the
 * pre-tokenizer regex and the number of tokens), then every token in rank order from 0, each as one length byte followed by its bytes. src/util/token-count.ts
 * reads it (`readVocabulary`).
 */

/** Encodes a js-tiktoken ranks module's default export (`{ pat_str, bpe_ranks }`) into the file's bytes. */
export function encodeTokenRanks(ranks) {
  const tokens = [];
  for (const line of ranks.bpe_ranks.split("\n")) {
    if (line === "") continue;
    const [, offsetText, ...encoded] = line.split(" ");
    const offset = Number.parseInt(offsetText ?? "0", 10);
    encoded.forEach((token, i) => {
      tokens[offset + i] = Buffer.from(token, "base64");
    });
  }
  const parts = [Buffer.from(`${JSON.stringify({ pat_str: ranks.pat_str, tokens: tokens.length })}\n`)];
  for (let rank = 0; rank < tokens.length; rank++) {
    const token = tokens[rank];
    if (token === undefined)
      throw new Error(`o200k_base has no token of rank ${rank}; the file format needs every rank`);
    if (token.length === 0 || token.length > 255) throw new Error(`token ${rank} is ${token.length} bytes long`);
    parts.push(Buffer.from([token.length]), token);
  }
  return Buffer.concat(parts);
}
