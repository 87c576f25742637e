/**
 * A BPE vocabulary held in typed arrays: every token's bytes in one buffer (the vocabulary file itself) and an
 * open-addressing hash table of ranks over them. A `Map` of 200,000 latin1 strings costs about 20 MB and, while it is
 * built, young-generation collections of 20–40 ms that copy every string (the event loop stops for each); these
 * arrays are about 4 MB, built without allocating per token, and a lookup hashes a byte range instead of making a
 * string of it.
 *
 * The file (written by the build, tools/token-ranks.mjs): one line of JSON (`{"pat_str": …, "tokens": N}`, the
 * pre-tokenizer regex and the number of tokens), then every token in rank order from 0, each as one length byte
 * followed by its bytes.
 */

/** Ranks file shape of `js-tiktoken/ranks/*` (tests compare against it). */
export interface RanksFile {
  pat_str: string;
  bpe_ranks: string;
}

/** Milliseconds of indexing between two yields to the event loop. */
const YIELD_AFTER_MS = 2;

/** FNV-1a over `bytes[from, to)`. */
function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}

/** A vocabulary: the pre-tokenizer regex and the rank of every token. */
export class Vocabulary {
  /** Slot → rank + 1 (0: empty). */
  private readonly table: Int32Array;
  private readonly mask: number;

  private constructor(
    readonly pattern: string,
    /** The file's bytes; token r is `data[starts[r] + 1, starts[r] + 1 + data[starts[r]])`. */
    private readonly data: Uint8Array,
    private readonly starts: Int32Array,
  ) {
    let slots = 1;
    while (slots < starts.length * 2) slots *= 2;
    this.table = new Int32Array(slots);
    this.mask = slots - 1;
  }

  /** Number of tokens. */
  get size(): number {
    return this.starts.length;
  }

  /** The rank of the token whose bytes are `bytes[from, to)`, or −1 when there is none. */
  rank(bytes: Uint8Array, from: number, to: number): number {
    const { table, mask, data, starts } = this;
    const length = to - from;
    for (let slot = hashOf(bytes, from, to) & mask; ; slot = (slot + 1) & mask) {
      const entry = table[slot] as number;
      if (entry === 0) return -1;
      const start = starts[entry - 1] as number;
      if (data[start] !== length) continue;
      let same = true;
      for (let i = 0; i < length; i++) {
        if (data[start + 1 + i] !== bytes[from + i]) {
          same = false;
          break;
        }
      }
      if (same) return entry - 1;
    }
  }

  /** Byte offset of the next token to index, and its rank. */
  private next = { at: 0, rank: 0 };

  /** Finds the next `count` tokens' boundaries and enters them into the table. */
  private index(count: number): void {
    const { table, mask, data, starts, next } = this;
    const to = Math.min(starts.length, next.rank + count);
    let at = next.at;
    for (let rank = next.rank; rank < to; rank++) {
      const length = data[at] as number;
      if (length === 0 || at + 1 + length > data.length) throw new Error("The vocabulary file is truncated.");
      starts[rank] = at;
      let slot = hashOf(data, at + 1, at + 1 + length) & mask;
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = rank + 1;
      at += 1 + length;
    }
    next.at = at;
    next.rank = to;
  }

  /** Parses the file's header (the table is still empty). */
  private static parse(file: Uint8Array): Vocabulary {
    const headerEnd = file.indexOf(0x0a);
    const header = JSON.parse(Buffer.from(file.buffer, file.byteOffset, headerEnd).toString("utf8")) as {
      pat_str?: unknown;
      tokens?: unknown;
    };
    if (typeof header.pat_str !== "string" || typeof header.tokens !== "number") {
      throw new Error("The vocabulary file has no pre-tokenizer pattern or token count.");
    }
    const vocabulary = new Vocabulary(header.pat_str, file, new Int32Array(header.tokens));
    vocabulary.next.at = headerEnd + 1;
    return vocabulary;
  }

  /** Reads the vocabulary file at once (tests, tools). */
  static fromFileSync(file: Uint8Array): Vocabulary {
    const vocabulary = Vocabulary.parse(file);
    vocabulary.index(vocabulary.size);
    return vocabulary;
  }

  /** Reads the vocabulary file, yielding to the event loop every few milliseconds while it indexes. */
  static async fromFile(file: Uint8Array): Promise<Vocabulary> {
    const vocabulary = Vocabulary.parse(file);
    let started = performance.now();
    while (vocabulary.next.rank < vocabulary.size) {
      vocabulary.index(2048);
      if (performance.now() - started >= YIELD_AFTER_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        started = performance.now();
      }
    }
    return vocabulary;
  }

  /** The file's bytes for a js-tiktoken ranks module (the format tools/token-ranks.mjs writes). */
  static fileOf(ranks: RanksFile): Buffer {
    const tokens: Buffer[] = [];
    for (const line of ranks.bpe_ranks.split("\n")) {
      if (line === "") continue;
      const [, offsetText, ...encoded] = line.split(" ");
      const offset = Number.parseInt(offsetText ?? "0", 10);
      encoded.forEach((token, i) => {
        tokens[offset + i] = Buffer.from(token, "base64");
      });
    }
    const parts: Uint8Array[] = [Buffer.from(`${JSON.stringify({ pat_str: ranks.pat_str, tokens: tokens.length })}\n`)];
    for (const token of tokens) parts.push(Buffer.from([token.length]), token);
    return Buffer.concat(parts);
  }
}
