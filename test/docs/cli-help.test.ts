/**
 * What the CLI accepts, what its `--help` shows and what the documentation says agree: every option a command parses
 * is in its help and on the page that documents the command, every command is in docs/commands.md's table, each help
 * has a usage line and examples, and every `--flag` the documentation writes after `cursor-bridge <command>` is one
 * that command accepts (so a renamed or removed flag cannot stay documented).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Command } from "../../src/cli/command.js";
import { COMMAND_LOADERS, loadCommands } from "../../src/cli/commands.js";
import { SETTINGS } from "../../src/config/settings.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** The page that documents each command's own options (docs/commands.md links to it). */
const PAGE_OF: Record<string, string> = {
  serve: "docs/commands.md",
  emulator: "docs/emulator.md",
  login: "docs/commands.md",
  logout: "docs/commands.md",
  import: "docs/commands.md",
  accounts: "docs/commands.md",
  status: "docs/commands.md",
  models: "docs/commands.md",
  usage: "docs/commands.md",
  doctor: "docs/commands.md",
  setup: "docs/clients.md",
  keys: "docs/team.md",
  audit: "docs/team.md",
  acp: "docs/clients.md",
};

/** The flags every command but `emulator` accepts besides its own: `--json`, `--config`, each setting's flag. */
const SHARED = new Set(["--json", "--config", "--help", ...SETTINGS.flatMap((setting) => setting.flag ?? [])]);

function accepted(command: Command): Set<string> {
  const own = Object.keys(command.options).map((name) => `--${name}`);
  return new Set(command.name === "emulator" ? [...own, "--help"] : [...own, ...SHARED]);
}

/** README.md and every page of docs/. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs];
}

/**
 * Every `cursor-bridge <command> …` the documentation writes (in a code span or a code block), with the flags that
 * follow it up to the end of that command (a pipe, `;`, `&&`, `)`, a comment or the end of the span or line).
 */
function documentedInvocations(): Array<{ where: string; command: string; flags: string[] }> {
  const names = COMMAND_LOADERS.map((entry) => entry.name).join("|");
  const found: Array<{ where: string; command: string; flags: string[] }> = [];
  for (const page of pages()) {
    read(page)
      .split("\n")
      .forEach((line, index) => {
        const pattern = new RegExp(`cursor-bridge (${names})\\b([^\`\\n|;&)#"]*)`, "g");
        for (const match of line.matchAll(pattern)) {
          const flags = [...(match[2] ?? "").matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)].map((flag) => flag[0]);
          found.push({ where: `${page}:${index + 1}`, command: match[1] ?? "", flags });
        }
      });
  }
  return found;
}

describe("the CLI's help and the documentation", () => {
  it("shows every option each command parses, with a usage line and examples", async () => {
    const commands = await loadCommands();
    expect(commands.map((command) => command.name)).toEqual(COMMAND_LOADERS.map((entry) => entry.name));
    for (const command of commands) {
      expect(command.help.startsWith(`Usage: cursor-bridge ${command.name}`), command.name).toBe(true);
      expect(command.help, `${command.name} --help has examples`).toMatch(/^Examples:\n {2}\S/m);
      for (const name of Object.keys(command.options)) {
        expect(command.help, `${command.name} --help shows --${name}`).toMatch(new RegExp(`--${name}\\b`));
      }
    }
  });

  it("documents every option of every command on the command's page", async () => {
    const missing: string[] = [];
    for (const command of await loadCommands()) {
      const page = PAGE_OF[command.name];
      expect(page, `the page of ${command.name}`).toBeDefined();
      const text = read(page ?? "");
      for (const name of Object.keys(command.options)) {
        if (!new RegExp(`--${name}\\b`).test(text)) missing.push(`${command.name} --${name} (${page})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("lists every command in docs/commands.md's table", () => {
    const page = read("docs/commands.md");
    const table = page.slice(page.indexOf("## Commands"), page.indexOf("## Settings"));
    const firstCells = table
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .map((line) => line.split(" | ")[0] ?? "");
    for (const { name } of COMMAND_LOADERS) {
      expect(
        firstCells.some((cell) => cell.includes(`\`cursor-bridge ${name}`) || cell.includes(`\`${name}\``)),
        `docs/commands.md lists ${name}`,
      ).toBe(true);
    }
  });

  it("writes after `cursor-bridge <command>` only flags that command accepts", async () => {
    const commands = new Map((await loadCommands()).map((command) => [command.name, accepted(command)]));
    const invocations = documentedInvocations();
    expect(invocations.length).toBeGreaterThan(50);
    const unknown = invocations.flatMap(({ where, command, flags }) =>
      flags
        .filter((flag) => !commands.get(command)?.has(flag))
        .map((flag) => `${where}: cursor-bridge ${command} ${flag}`),
    );
    expect(unknown).toEqual([]);
  });
});
