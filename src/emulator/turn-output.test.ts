/** Token chunking of the emulator's output agrees with tokenize() without building a token array. */
import { describe, expect, it } from "vitest";
import { tokenize } from "./scripted-model.js";
import { countTokens, tokenStart } from "./turn-output.js";

function chunks(text: string, size: number): string[] {
  const total = countTokens(text);
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < total; i += size) {
    const end = i + size >= total ? text.length : tokenStart(text, start, size);
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

describe("emulator output chunks", () => {
  it.each([
    "You said: hello world",
    "  leading and trailing  ",
    "one",
    "   ",
    "",
    "tabs\tand\nnew lines\u00a0non-breaking\u2003em space",
  ])("cuts %j exactly where tokenize() would", (text) => {
    const tokens = tokenize(text);
    expect(countTokens(text)).toBe(tokens.length);
    for (const size of [1, 2, 3]) {
      const expected: string[] = [];
      for (let i = 0; i < tokens.length; i += size) expected.push(tokens.slice(i, i + size).join(""));
      expect(chunks(text, size)).toEqual(expected);
    }
  });
});
