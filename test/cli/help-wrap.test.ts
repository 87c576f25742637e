/**
 * Help text wraps cleanly at terminal widths under 120 columns: no line is wider than the terminal (unless one word
 * is), and no line breaks early, i.e. the first word of a continuation line would not have fitted on the line before.
 * Every command's help and the top-level help, at 80 and 100 columns; the top-level help names every setup client.
 */
import { describe, expect, it } from "vitest";
import { loadCommands } from "../../src/cli/commands.js";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";
import { continuationIndent, wrapText } from "../../src/cli/wrap.js";

async function help(args: string[], columns: number): Promise<string> {
  let out = "";
  const io: CliIo = { out: (text) => (out += text), err: (text) => (out += text), isTty: false, columns, env: {} };
  expect(await main(args, io)).toBe(0);
  return out;
}

const indentOf = (line: string) => line.length - line.trimStart().length;
const isEntry = (line: string) => /^\s+\S.*?\s{2,}\S/.test(line);

/** Lines that break before the width was used up, with the line after them. */
function raggedBreaks(text: string, width: number): string[] {
  const problems: string[] = [];
  const lines = text.split("\n");
  let examples = false;
  for (let i = 0; i + 1 < lines.length; i++) {
    const line = lines[i] ?? "";
    const next = lines[i + 1] ?? "";
    if (/^\S/.test(line)) examples = /^Examples?:/.test(line);
    if (examples || line.trim() === "" || next.trim() === "" || line.endsWith(":") || isEntry(next)) continue;
    // A continuation starts where the line's text (or its description column) starts; a line opening with a label
    // ("Upstream: …", "Usage: …") starts a new statement.
    if (indentOf(next) !== continuationIndent(line) || /^\S[^.]*:\s/.test(next)) continue;
    const word = next.trimStart().split(" ")[0] ?? "";
    // Two spaces: a break may fall on a double space (before "[env …]"), which the joined line would have kept.
    if (line.length + 2 + word.length <= width) problems.push(`${line}⏎\n${next}`);
  }
  return problems;
}

describe("help wrapping", () => {
  it.each([80, 100])("every help text fits %i columns without ragged breaks", async (width) => {
    const commands = await loadCommands();
    const texts = [await help(["--help"], width)];
    for (const command of commands) texts.push(await help([command.name, "--help"], width));
    for (const text of texts) {
      const tooWide = text.split("\n").filter((line) => line.length > width && line.trim().includes(" "));
      expect(tooWide, text).toEqual([]);
      expect(raggedBreaks(text, width), text).toEqual([]);
    }
  });

  it("keeps each list item on its own line and continues it under the item's text", () => {
    const text = [
      "Looks in:",
      "  - the first place, whose description is long enough to need a second line at this width",
      "    (continued here in the source)",
      "  - the second place",
    ].join("\n");
    expect(wrapText(text, 60).split("\n")).toEqual([
      "Looks in:",
      "  - the first place, whose description is long enough to",
      "    need a second line at this width (continued here in the",
      "    source)",
      "  - the second place",
    ]);
  });

  it("the top-level help lists every setup client, opencode-plugin included", async () => {
    const text = (await help(["--help"], 200)).replace(/\s+/g, " ");
    for (const client of ["opencode", "opencode-plugin", "claude-code", "codex", "openai", "curl"]) {
      expect(text).toContain(client);
    }
  });
});
