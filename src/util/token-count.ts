/**
 * Counting o200k_base tokens in linear-ish time without holding the event loop.
 *
 * js-tiktoken's `encode` merges each pre-tokenizer piece with a quadratic loop (every step re-joins every pair's bytes
 * into a string key), so one long piece, a run without whitespace such as 8,000 × `x`, an 8 KB `-----` line or a
 * paragraph of Chinese, takes seconds to minutes. This module keeps the same vocabulary, the same pre-tokenizer
 * regex and the same merge rule (lowest rank first, leftmost on a tie) but merges with a heap in O(n log n), so its
 * count equals `encode(text, [], [])`'s length for every piece up to {@link MAX_PIECE_BYTES}. A longer piece is
 * merged in chunks of that size (a token or so more per chunk than the exact count, which would cost seconds).
 * The text is cut into slices where the pre-tokenizer starts a new piece anyway (a space or tab after a non-space),
 * so slicing changes nothing; only a stretch of {@link MAX_SLICE} characters with no such place is cut inside.
 * `count` yields to the event loop every few milliseconds, so a large count shares the process with other requests.
 */

import { readFile } from "node:fs/promises";
import { Vocabulary } from "./token-vocabulary.js";

/** Characters per slice handed to the pre-tokenizer at once. */
const SLICE = 16 * 1024;
/** A slice without a safe cut point is cut here regardless. */
export const MAX_SLICE = 64 * 1024;
/** A longer piece (a run without whitespace) is merged in chunks of this many bytes. */
export const MAX_PIECE_BYTES = 2048;
/** Milliseconds of counting between two yields to the event loop. */
const YIELD_AFTER_MS = 2;

export interface TokenCounter {
  /** Exact o200k_base count of `text`, synchronously (bounded inputs only: tool names, short strings). */
  countSync(text: string): number;
  /** The same count, yielding to the event loop every few milliseconds. */
  count(texts: readonly string[]): Promise<number>;
}

/** Builds a counter over a vocabulary. */
export function createTokenCounter(vocabulary: Vocabulary): TokenCounter {
  const pattern = new RegExp(vocabulary.pattern, "gu");

  /** Token counts of one slice, a piece at a time, a long piece {@link MAX_PIECE_BYTES} at a time. */
  function* steps(slice: string, repeated: Map<string, number>): Generator<number> {
    for (const match of slice.matchAll(pattern)) {
      const bytes = Buffer.from(match[0], "utf8");
      if (bytes.length <= MAX_PIECE_BYTES) {
        yield vocabulary.rank(bytes, 0, bytes.length) >= 0 ? 1 : mergeCount(bytes, vocabulary);
        continue;
      }
      for (let at = 0; at < bytes.length; at += MAX_PIECE_BYTES) {
        const chunk = bytes.subarray(at, at + MAX_PIECE_BYTES);
        const key = chunk.toString("latin1");
        let tokens = repeated.get(key);
        if (tokens === undefined) {
          tokens = mergeCount(chunk, vocabulary);
          if (repeated.size < 64) repeated.set(key, tokens);
        }
        yield tokens;
      }
    }
  }

  return {
    countSync(text) {
      let total = 0;
      const repeated = new Map<string, number>();
      for (const slice of slices(text)) for (const tokens of steps(slice, repeated)) total += tokens;
      return total;
    },
    async count(texts) {
      let total = 0;
      let started = performance.now();
      const repeated = new Map<string, number>();
      for (const text of texts) {
        for (const slice of slices(text)) {
          for (const tokens of steps(slice, repeated)) {
            total += tokens;
            if (performance.now() - started >= YIELD_AFTER_MS) {
              await new Promise<void>((resolve) => setImmediate(resolve));
              started = performance.now();
            }
          }
        }
      }
      return total;
    },
  };
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function isWhitespace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * Cuts `text` where the pre-tokenizer starts a new piece anyway: before a space or tab that follows a character
 * that is not whitespace (no o200k piece continues from a non-space over a space or tab). Pieces, and so the count,
 * are the same as for the whole text. Only a stretch of {@link MAX_SLICE} characters without such a place is cut
 * inside, avoiding a split surrogate pair.
 */
export function* slices(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > SLICE) {
    let cut = -1;
    const limit = Math.min(text.length - 1, start + MAX_SLICE);
    for (let i = start + SLICE; i <= limit; i++) {
      if (isBlank(text.charCodeAt(i)) && !isWhitespace(text.charCodeAt(i - 1))) {
        cut = i;
        break;
      }
    }
    if (cut === -1) {
      cut = start + MAX_SLICE;
      const code = text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    yield text.slice(start, cut);
    start = cut;
  }
  if (start < text.length) yield text.slice(start);
}

/**
 * Byte-pair merge of one piece, counting the resulting tokens: repeatedly merges the adjacent pair of lowest rank
 * (leftmost on a tie), as tiktoken does, with a min-heap of candidate pairs instead of a rescan per merge. Parts are
 * kept as `end[start]` (−1 once merged into their left neighbour); a heap entry is stale when either part changed.
 */
function mergeCount(bytes: Buffer, vocabulary: Vocabulary): number {
  const n = bytes.length;
  if (n <= 1) return n;
  const end = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) {
    end[i] = i + 1;
    prev[i] = i - 1;
  }
  // At most n − 1 initial candidates and two per merge.
  const heap = new PairHeap(3 * n);
  const consider = (left: number) => {
    const mid = end[left] as number;
    if (mid >= n) return;
    const right = end[mid] as number;
    const rank = vocabulary.rank(bytes, left, right);
    if (rank >= 0) heap.push(rank, left, mid, right);
  };
  for (let i = 0; i < n - 1; i++) consider(i);
  let parts = n;
  while (heap.size > 0) {
    const left = heap.pop();
    const mid = heap.mid;
    const right = heap.right;
    if (end[left] !== mid || end[mid] !== right) continue;
    end[left] = right;
    end[mid] = -1;
    if (right < n) prev[right] = left;
    parts -= 1;
    const before = prev[left] as number;
    if (before >= 0) consider(before);
    consider(left);
  }
  return parts;
}

/** Min-heap of (rank, left start) in typed arrays, with the pair's other two boundaries alongside. */
class PairHeap {
  size = 0;
  /** Boundaries of the pair the last {@link pop} returned. */
  mid = 0;
  right = 0;
  private readonly keys: Float64Array;
  private readonly mids: Int32Array;
  private readonly rights: Int32Array;

  constructor(capacity: number) {
    this.keys = new Float64Array(capacity);
    this.mids = new Int32Array(capacity);
    this.rights = new Int32Array(capacity);
  }

  push(rank: number, left: number, mid: number, right: number): void {
    // rank < 2^18 and left < 2^31: the key orders by rank, then by position, exactly representable in a double.
    const key = rank * 2 ** 32 + left;
    const { keys, mids, rights } = this;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((keys[parent] as number) <= key) break;
      keys[i] = keys[parent] as number;
      mids[i] = mids[parent] as number;
      rights[i] = rights[parent] as number;
      i = parent;
    }
    keys[i] = key;
    mids[i] = mid;
    rights[i] = right;
  }

  /** Removes the least pair; returns its left start (its other boundaries in {@link mid} and {@link right}). */
  pop(): number {
    const { keys, mids, rights } = this;
    const left = (keys[0] as number) % 2 ** 32;
    this.mid = mids[0] as number;
    this.right = rights[0] as number;
    const size = --this.size;
    const lastKey = keys[size] as number;
    const lastMid = mids[size] as number;
    const lastRight = rights[size] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      if (child + 1 < size && (keys[child + 1] as number) < (keys[child] as number)) child += 1;
      if ((keys[child] as number) >= lastKey) break;
      keys[i] = keys[child] as number;
      mids[i] = mids[child] as number;
      rights[i] = rights[child] as number;
      i = child;
    }
    keys[i] = lastKey;
    mids[i] = lastMid;
    rights[i] = lastRight;
    return left;
  }
}

/**
 * Where the build put the o200k_base vocabulary: dist/o200k_base.tokens, seen from the bundle's chunks (dist/chunks/),
 * from dist/main.js, or from this source file (tests run src/ against the built dist/).
 */
const VOCABULARY_FILES = ["../o200k_base.tokens", "./o200k_base.tokens", "../../dist/o200k_base.tokens"];

async function readVocabularyFile(): Promise<Buffer> {
  let firstError: unknown;
  for (const file of VOCABULARY_FILES) {
    try {
      return await readFile(new URL(file, import.meta.url));
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}

let shared: Promise<TokenCounter> | undefined;

/**
 * The o200k_base counter, built on first use (most servers never count): the file is read off the main thread and
 * indexed a few milliseconds at a time, so neither the first count nor anything else waits on a blocked event loop.
 * A failed load is not kept: the next count tries again.
 */
export function loadTokenCounter(): Promise<TokenCounter> {
  if (shared !== undefined) return shared;
  const loading = readVocabularyFile()
    .then((file) => Vocabulary.fromFile(file))
    .then(createTokenCounter);
  shared = loading;
  loading.catch(() => {
    if (shared === loading) shared = undefined;
  });
  return loading;
}
