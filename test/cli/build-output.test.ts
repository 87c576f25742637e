/** tools/build.mjs rewrites wide characters in the bundle's comments (so V8 keeps its sources one byte a character). */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { latin1Comments } from "../../tools/build.mjs";

const rewrite = latin1Comments as (text: string) => string;

describe("latin1Comments", () => {
  it("rewrites wide characters in comments, one `?` per UTF-16 unit, and keeps Latin-1 ones", () => {
    expect(rewrite("  // a — b → c §4.2 é")).toBe("  // a ? b ? c §4.2 é");
    expect(rewrite("  /** Σ of 😀 */")).toBe("  /** ? of ?? */");
    expect(rewrite("  /**\n   * multi —\n   */\nconst x = 1;")).toBe("  /**\n   * multi ?\n   */\nconst x = 1;");
  });

  it("never touches code: regex and String.raw literals, code after a comment, comment markers inside strings", () => {
    const code = [
      "const r = String.raw`a—b`;",
      "x = `—`; // — c",
      "/* — */ const s = /—/u;",
      'const t = "/*"; // —',
      "a * b — c",
    ].join("\n");
    expect(rewrite(code)).toBe(code.replace("/* — */", "/* ? */"));
  });

  it("returns text without wide characters as it is", () => {
    const text = "// plain ascii\nconst a = 1; // café\n";
    expect(rewrite(text)).toBe(text);
  });
});
