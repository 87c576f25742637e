import { Tiktoken } from "js-tiktoken/lite";
import ranks from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { createTokenCounter, MAX_PIECE_BYTES, MAX_SLICE, slices } from "./token-count.js";
import { Vocabulary } from "./token-vocabulary.js";

const counter = createTokenCounter(Vocabulary.fromFileSync(Vocabulary.fileOf(ranks)));
const reference = new Tiktoken(ranks);
const exact = (text: string) => reference.encode(text, [], []).length;

/** Deterministic pseudo-random text from an alphabet. */
function randomText(length: number, alphabet: string, seed: number): string {
  let state = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    out += alphabet[state % alphabet.length];
  }
  return out;
}

describe("o200k_base token counter", () => {
  it("counts ordinary text exactly as js-tiktoken's encode does", () => {
    const texts = [
      "Hello, world! How's it going? I'm fine; they'll see.",
      "The quick brown fox jumps over the lazy dog.\n\n    indented();\r\n\ttabbed  double  spaces  \n",
      "漢字かな交じり文、テスト。中文句子没有空格但是有标点。한국어 문장도 있습니다.",
      "emoji 😀👍🏽 and a lone \ud800 surrogate, RTL \u202e override, NBSP\u00a0here",
      JSON.stringify({ type: "object", properties: { q: { type: "string", description: "the query" } } }),
      "<|endoftext|> is ordinary text here <|fim_prefix|>",
      "1234567890 3.14159 -42 1e10 0xdeadbeef",
      "-".repeat(1_500),
      "x".repeat(1_500),
      randomText(1_200, "abcdefghijklmnopqrstuvwxyz", 7),
      randomText(3_000, " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n", 11),
      "",
    ];
    for (const text of texts) expect(counter.countSync(text), JSON.stringify(text.slice(0, 40))).toBe(exact(text));
  });

  it("gives the same count sliced and whole, and the async count equals the sync one", async () => {
    const prose = "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n".repeat(2_000);
    expect([...slices(prose)].length).toBeGreaterThan(3);
    expect([...slices(prose)].join("")).toBe(prose);
    expect(counter.countSync(prose)).toBe(exact(prose));
    expect(await counter.count([prose, "two words"])).toBe(exact(prose) + 2);
  });

  it("cuts a stretch with no space inside at MAX_SLICE, never inside a surrogate pair", () => {
    const text = `a${"😀".repeat(MAX_SLICE)}`;
    const parts = [...slices(text)];
    expect(parts.join("")).toBe(text);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(MAX_SLICE);
    for (const part of parts) expect(Buffer.from(part, "utf8").toString("utf8")).toBe(part);
  });

  it("counts a run longer than MAX_PIECE_BYTES in chunks, within a token per chunk of the exact count", () => {
    const run = randomText(MAX_PIECE_BYTES + 600, "abcdefghijklmnopqrstuvwxyz", 3);
    const chunked = counter.countSync(run);
    const first = counter.countSync(run.slice(0, MAX_PIECE_BYTES));
    expect(chunked).toBe(first + counter.countSync(run.slice(MAX_PIECE_BYTES)));
    // 100,000 × one character: 12,500 tokens of eight, as the exact merge gives for every multiple of eight.
    expect(counter.countSync("x".repeat(100_000))).toBe(exact("x".repeat(800)) * 125);
  });
});
