import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GrepPatternError,
  globFiles,
  globToRegExp,
  grepFiles,
  insideCwd,
  listDirectory,
  OutsideCwdError,
} from "./local-search.js";

let cwd: string;
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), "cursor-bridge-search-"));
  mkdirSync(join(cwd, "src", "deep"), { recursive: true });
  mkdirSync(join(cwd, "node_modules", "x"), { recursive: true });
  writeFileSync(join(cwd, "src", "a.ts"), "const a = 1;\nexport default a;\n");
  writeFileSync(join(cwd, "src", "deep", "b.md"), "# Title\nprose that says const\n");
  writeFileSync(join(cwd, "node_modules", "x", "c.ts"), "const skipped = 1;\n");
  symlinkSync("/etc", join(cwd, "escape"));
  writeFileSync(join(cwd, "redos.txt"), `${"a".repeat(34)}!\n${"a".repeat(5000)}!\n`);
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("local search inside the session's folder", () => {
  it("matches globs like ripgrep's --glob", () => {
    expect(globToRegExp("*.ts").test("src/a.ts")).toBe(true);
    expect(globToRegExp("src/**/*.md").test("src/deep/b.md")).toBe(true);
    expect(globToRegExp("src/*.md").test("src/deep/b.md")).toBe(false);
    expect(globToRegExp("*.{ts,md}").test("x.md")).toBe(true);
  });

  it("lists, globs and greps, skipping dependency folders", async () => {
    expect((await listDirectory(cwd, "src")).split("\n")).toEqual([
      join(cwd, "src", "a.ts"),
      `${join(cwd, "src", "deep")}/`,
      join(cwd, "src", "deep", "b.md"),
    ]);
    expect(await globFiles(cwd, "**/*.ts", undefined)).toBe(join(cwd, "src", "a.ts"));
    const grep = await grepFiles(cwd, { pattern: "^const", path: undefined, glob: undefined, caseInsensitive: false });
    expect(grep).toBe(`${join(cwd, "src", "a.ts")}:1:const a = 1;`);
    expect(await grepFiles(cwd, { pattern: "TITLE", path: "src", glob: "*.md", caseInsensitive: true })).toContain(
      "b.md:1:# Title",
    );
  });

  it("refuses paths outside cwd, symbolic links included", async () => {
    await expect(insideCwd(cwd, "../")).rejects.toBeInstanceOf(OutsideCwdError);
    await expect(insideCwd(cwd, "/etc")).rejects.toBeInstanceOf(OutsideCwdError);
    await expect(listDirectory(cwd, "escape")).rejects.toBeInstanceOf(OutsideCwdError);
    expect(await insideCwd(cwd, "src")).toMatch(/src$/);
  });

  it("runs patterns on RE2: a catastrophic backtracking pattern finishes, a refused one is a named error", async () => {
    const search = { path: "redos.txt", glob: undefined, caseInsensitive: false };
    expect(await grepFiles(cwd, { ...search, pattern: "(a+)+$" })).toBe("no matches");
    expect(await grepFiles(cwd, { ...search, pattern: "(a+)+!$" })).toContain("redos.txt:1:");
    await expect(grepFiles(cwd, { ...search, pattern: "(a)\\1" })).rejects.toBeInstanceOf(GrepPatternError);
    await expect(grepFiles(cwd, { ...search, pattern: "a(?=!)" })).rejects.toThrow(/regex parse error/);
  });
});
