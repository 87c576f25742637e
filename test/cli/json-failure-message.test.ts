/**
 * A command that fails under --json without printing its JSON gets `{"error": …}` with what it wrote to stderr as the
 * message: the end of it, so a long-running command (serve writes a line per request) does not keep every line.
 */
import { describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/command.js";
import type { CliIo } from "../../src/cli/io.js";
import { main } from "../../src/cli/main.js";

function io(): CliIo & { outText: string; errText: string } {
  const captured = {
    outText: "",
    errText: "",
    out: (text: string) => {
      captured.outText += text;
    },
    err: (text: string) => {
      captured.errText += text;
    },
    isTty: false,
    env: {},
  };
  return captured;
}

/** A command that writes `lines` numbered lines to stderr and fails. */
const noisy = (lines: number) => ({
  name: "noisy",
  summary: "writes and fails",
  help: "noisy",
  options: {},
  run: async (_argv: string[], commandIo: CliIo) => {
    for (let i = 0; i < lines; i++) commandIo.err(`line ${i} of what a long-running command logs\n`);
    commandIo.err("the reason it failed\n");
    return EXIT.failure;
  },
});

describe("a failure under --json", () => {
  it("reports what the command wrote to stderr", async () => {
    const target = io();
    expect(await main(["noisy", "--json"], target, [noisy(2)])).toBe(EXIT.failure);
    const { error } = JSON.parse(target.outText) as { error: { message: string } };
    expect(error.message).toBe(
      "line 0 of what a long-running command logs\nline 1 of what a long-running command logs\nthe reason it failed",
    );
  });

  it("reports only the end of a long stderr, every line of which was still written", async () => {
    const target = io();
    expect(await main(["noisy", "--json"], target, [noisy(20_000)])).toBe(EXIT.failure);
    const { error } = JSON.parse(target.outText) as { error: { message: string } };
    expect(error.message.endsWith("line 19999 of what a long-running command logs\nthe reason it failed")).toBe(true);
    expect(error.message.length).toBeGreaterThanOrEqual(16_384);
    expect(error.message.length).toBeLessThanOrEqual(2 * 16_384);
    expect(target.errText.split("\n").length).toBe(20_002);
  });

  it("prints no JSON without --json", async () => {
    const target = io();
    expect(await main(["noisy"], target, [noisy(3)])).toBe(EXIT.failure);
    expect(target.outText).toBe("");
    expect(target.errText).toContain("the reason it failed");
  });
});
