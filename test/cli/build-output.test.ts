/**
 * tools/build.mjs rewrites wide characters in the bundle's comments (so V8 keeps its sources one byte a character), and
 * writes the one vocabulary count_tokens uses into dist/ instead of shipping js-tiktoken.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { Tiktoken } from "js-tiktoken/lite";
import ranks from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { loadTokenCounter } from "../../src/util/token-count.js";
import { Vocabulary } from "../../src/util/token-vocabulary.js";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { latin1Comments } from "../../tools/build.mjs";
// @ts-expect-error: a plain .mjs build tool without type declarations
import { encodeTokenRanks } from "../../tools/token-ranks.mjs";

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

describe("dist/o200k_base.tokens", () => {
  const file = fileURLToPath(new URL("../../dist/o200k_base.tokens", import.meta.url));

  it("holds exactly js-tiktoken's o200k_base vocabulary, and nothing else of js-tiktoken is needed to count", async () => {
    const built = readFileSync(file);
    // The build's encoder and the one the tests read js-tiktoken with write the same bytes.
    expect(built.equals(Vocabulary.fileOf(ranks))).toBe(true);
    expect(built.equals((encodeTokenRanks as (r: typeof ranks) => Buffer)(ranks))).toBe(true);
    const vocabulary = Vocabulary.fromFileSync(built);
    const reference = new Tiktoken(ranks);
    expect(vocabulary.size).toBe(199_998);
    // Every token of js-tiktoken's text format has its rank.
    for (const line of ranks.bpe_ranks.split("\n")) {
      const [, offset, ...tokens] = line.split(" ");
      tokens.forEach((text, i) => {
        const token = Buffer.from(text, "base64");
        const rank = Number(offset) + i;
        if (vocabulary.rank(token, 0, token.length) !== rank) expect.fail(`rank ${rank}`);
      });
    }
    expect(vocabulary.rank(Buffer.from("no such token at all"), 0, 20)).toBe(-1);
    const counter = await loadTokenCounter();
    const text = "Hello, world! 漢字かな交じり文 😀 indented();\n\t-----";
    expect(counter.countSync(text)).toBe(reference.encode(text, [], []).length);
    // The extracted vocabulary is small; js-tiktoken's every-encoding package is 22 MB.
    expect(statSync(file).size).toBeLessThan(2 * 1024 * 1024);
  });

  it("is indexed in slices: other callbacks run while it loads", async () => {
    let ranMeanwhile = 0;
    const tick = () => {
      ranMeanwhile += 1;
      if (!done) setImmediate(tick);
    };
    let done = false;
    setImmediate(tick);
    const loading = Vocabulary.fromFile(readFileSync(file)).finally(() => {
      done = true;
    });
    await loading;
    // Indexed in one go, the load would settle before any setImmediate callback; each yield lets one run. How many
    // slices there are depends on the machine's speed (a slice is a few ms), so only "at least one yield" is stable.
    expect(ranMeanwhile).toBeGreaterThan(0);
  });
});

describe("dist/chunks", () => {
  const dist = fileURLToPath(new URL("../../dist/", import.meta.url));
  // The build's own chunks: dist/chunks also keeps the previous build's, for a server started before it.
  const builds = join(dist, ".builds.json");
  const current = existsSync(builds)
    ? new Set((JSON.parse(readFileSync(builds, "utf8")) as { builds: string[][] }).builds.at(-1))
    : undefined;
  const files = [
    "main.js",
    ...readdirSync(join(dist, "chunks"))
      .filter((name) => name.endsWith(".js"))
      .map((name) => `chunks/${name}`)
      .filter((file) => current === undefined || current.has(file)),
  ];
  const text = new Map(files.map((file) => [file, readFileSync(join(dist, file), "utf8")]));
  const resolve = (from: string, specifier: string) => posix.normalize(posix.join(posix.dirname(from), specifier));
  const imports = (file: string, pattern: RegExp) =>
    [...(text.get(file) ?? "").matchAll(pattern)].map((match) => resolve(file, match[1] as string));
  const staticImports = (file: string) => imports(file, /(?:from|import)\s*"(\.\.?\/[^"]+\.js)";/g);
  const dynamicImports = (file: string) => imports(file, /import\(\s*"(\.\.?\/[^"]+\.js)"\s*\)/g);
  const atStart = new Set<string>();
  const stack = ["main.js"];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (atStart.has(file)) continue;
    atStart.add(file);
    stack.push(...staticImports(file));
  }

  it("names only files that exist", () => {
    for (const file of files) {
      for (const target of [...staticImports(file), ...dynamicImports(file)])
        expect(text.has(target), `${file} → ${target}`).toBe(true);
    }
  });

  it("merges the small shared chunks into one file that loads nothing a start did not load already", () => {
    const merged = files.filter((file) => /^chunks\/merged-[0-9A-F]+\.js$/.test(file));
    expect(merged).toHaveLength(1);
    expect(atStart.has(merged[0] as string)).toBe(true);
    for (const target of staticImports(merged[0] as string)) expect(atStart.has(target), target).toBe(true);
  });

  it("keeps every module loaded with import() out of what a start loads", () => {
    const lazy = new Set(files.flatMap(dynamicImports));
    expect(lazy.size).toBeGreaterThan(10);
    for (const file of lazy) expect(atStart.has(file), file).toBe(false);
  });
});
