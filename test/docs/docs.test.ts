/**
 * The documentation's shape: a README that is a short front door, one page of docs/ per reader's question, no prose
 * line over 120 characters, links that lead somewhere, source files named that exist, the emulator's directive table
 * as the emulator has it, and the performance record as the bench's generator writes it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  PERFORMANCE_PAGE,
  performanceTable,
  readResults,
  TABLE_END,
  TABLE_START,
} from "../../bench/performance-table.js";
import { SETUP_CLIENTS } from "../../src/cli/setup-clients.js";
import { DIRECTIVES, NATIVE_KINDS, type NativeKind } from "../../src/emulator/directives.js";
import { LsArgsSchema, ReadArgsSchema, WriteArgsSchema } from "../../src/gen/agent/v1/file_exec_pb.js";
import { GrepArgsSchema } from "../../src/gen/agent/v1/grep_exec_pb.js";
import { FetchArgsSchema } from "../../src/gen/agent/v1/misc_exec_pb.js";
import { ShellArgsSchema } from "../../src/gen/agent/v1/shell_exec_pb.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** README.md and every page of docs/. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`);
  return ["README.md", ...docs.sort()];
}

/** The lines of a page outside code blocks, each with its number. */
function proseLines(text: string): Array<{ n: number; line: string }> {
  const out: Array<{ n: number; line: string }> = [];
  let fenced = false;
  text.split("\n").forEach((line, index) => {
    if (line.trimStart().startsWith("```")) fenced = !fenced;
    else if (!fenced) out.push({ n: index + 1, line });
  });
  return out;
}

/** The files under `dir` (relative to the root), node_modules folders aside. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return entry.isFile() ? [path] : [];
  });
}

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
}

function anchors(text: string): Set<string> {
  return new Set(
    proseLines(text)
      .map(({ line }) => /^#{1,6} (.*)$/.exec(line)?.[1])
      .filter((heading): heading is string => heading !== undefined)
      .map(slug),
  );
}

describe("the documentation", () => {
  it("has a README of at most 250 lines and one page per reader's question", () => {
    expect(read("README.md").split("\n").length).toBeLessThanOrEqual(251);
    for (const page of ["clients", "api", "team", "emulator", "security", "architecture", "performance", "protocol"]) {
      expect(existsSync(join(ROOT, "docs", `${page}.md`)), `docs/${page}.md`).toBe(true);
      expect(read("README.md"), `the README links docs/${page}.md`).toContain(`](docs/${page}.md)`);
    }
  });

  it("has no prose line over 120 characters (code blocks and tables aside)", () => {
    const long: string[] = [];
    for (const page of pages().filter((p) => p !== "docs/protocol.md")) {
      for (const { n, line } of proseLines(read(page))) {
        if (!line.trimStart().startsWith("|") && [...line].length > 120)
          long.push(`${page}:${n} (${[...line].length})`);
      }
    }
    expect(long).toEqual([]);
  });

  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const dir = page.includes("/") ? page.slice(0, page.lastIndexOf("/")) : "";
      for (const { n, line } of proseLines(read(page))) {
        for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1] ?? "";
          if (/^[a-z]+:/.test(target)) continue;
          const [file, anchor] = target.split("#");
          const path = file === "" || file === undefined ? page : join(dir, file);
          if (!existsSync(join(ROOT, path))) {
            broken.push(`${page}:${n} ${target} (no file)`);
            continue;
          }
          if (anchor !== undefined && path.endsWith(".md") && !anchors(read(path)).has(anchor)) {
            broken.push(`${page}:${n} ${target} (no heading)`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only source files that exist", () => {
    const files = ["src", "test", "tools", "bench", "bin", "proto"].flatMap((dir) => sourceFiles(dir));
    expect(files.length).toBeGreaterThan(500);
    const missing: string[] = [];
    for (const page of [...pages(), "CONTRIBUTING.md"]) {
      for (const { n, line } of proseLines(read(page))) {
        for (const match of line.matchAll(/`([\w./-]+\.(?:ts|mjs|cjs|js|proto))`/g)) {
          const name = match[1] ?? "";
          // A path from the root (src/…, test/…), or a name relative to a folder the sentence names (kit/translate.ts).
          if (name.startsWith("dist/")) continue; // the build's output
          const found = /^(src|test|tools|bench|bin|proto)\/|^\.[^/]+$/.test(name)
            ? existsSync(join(ROOT, name))
            : files.some((file) => file === name || file.endsWith(`/${name}`));
          if (!found) missing.push(`${page}:${n} ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("lists every directive of the emulator's table with its arguments, and nothing else", () => {
    const page = read("docs/emulator.md");
    const rows = [...page.matchAll(/^\| `\[\[emu:(.*?)\]\]`/gm)].map((match) => match[1]);
    expect(rows).toEqual(DIRECTIVES.map((directive) => directive.syntax));
  });

  it("gives the fields of each native exec's arguments as the emulator reads them", () => {
    const schemas: Record<NativeKind, DescMessage> = {
      shell: ShellArgsSchema,
      read: ReadArgsSchema,
      ls: LsArgsSchema,
      grep: GrepArgsSchema,
      write: WriteArgsSchema,
      fetch: FetchArgsSchema,
    };
    const page = read("docs/emulator.md");
    for (const kind of NATIVE_KINDS) {
      const row = new RegExp(`^\\| \`${kind}\` \\| \`(\\w+)\` \\| (.*) \\| (.*) \\|$`, "m").exec(page);
      expect(row, `docs/emulator.md has a row for native ${kind}`).not.toBeNull();
      expect(row?.[1]).toBe(schemas[kind].name);
      const documented = [...(row?.[2] ?? "").matchAll(/`(\w+)`/g)].map((match) => match[1]);
      const fields = schemas[kind].fields.map((field) => field.jsonName).filter((name) => name !== "toolCallId");
      expect(
        fields.filter((name) => !documented.includes(name)),
        `undocumented ${kind} fields`,
      ).toEqual([]);
      expect(row?.[3]).toContain(`[[emu:native ${kind} {`);
    }
  });

  it("holds the performance record as bench/performance-table.ts writes it", () => {
    const page = readFileSync(PERFORMANCE_PAGE, "utf8");
    const start = page.indexOf(TABLE_START);
    const end = page.indexOf(TABLE_END);
    expect(start, "the markers of the generated table").toBeGreaterThan(-1);
    const table = performanceTable(readResults(join(ROOT, "bench", "results.json")));
    expect(page.slice(start + TABLE_START.length, end).trim()).toBe(table.trim());
  });
});

describe("docs/clients.md", () => {
  it("shows the Codex configuration exactly as `setup codex --write` writes it into a new file", () => {
    const codex = SETUP_CLIENTS.find((client) => client.name === "codex");
    const written = codex?.file?.merge(
      undefined,
      { origin: "http://127.0.0.1:8765", keyRequired: false, model: "auto", models: [], pluginEntry: "file:///x" },
      "/home/me/.codex/config.toml",
    );
    const shown = /```toml\n([\s\S]*?)```/.exec(read("docs/clients.md"))?.[1];
    expect(shown).toBe(written);
  });
});
