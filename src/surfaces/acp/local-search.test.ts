import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compileGlob,
  GrepPatternError,
  globFiles,
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
  mkdirSync(join(cwd, "many"));
  writeFileSync(join(cwd, "many", "a".repeat(45)), "aaa\n");
  writeFileSync(join(cwd, "many", `${"a".repeat(45)}b`), "aab\n");
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe("local search inside the session's folder", () => {
  it("matches globs like ripgrep's --glob", async () => {
    const glob = async (pattern: string, path: string) => (await compileGlob(pattern))(path);
    expect(await glob("*.ts", "src/a.ts")).toBe(true);
    expect(await glob("*.ts", "src/a.tsx")).toBe(false);
    expect(await glob("src/**/*.md", "src/deep/b.md")).toBe(true);
    expect(await glob("src/**/*.md", "src/b.md")).toBe(true);
    expect(await glob("src/*.md", "src/deep/b.md")).toBe(false);
    expect(await glob("src/**", "src/deep/b.md")).toBe(true);
    expect(await glob("*.{ts,md}", "x.md")).toBe(true);
    expect(await glob("*.{ts,md}", "x.js")).toBe(false);
    expect(await glob("?.ts", "a.ts")).toBe(true);
    expect(await glob("?.ts", "ab.ts")).toBe(false);
    expect(await glob("a?b", "a/b")).toBe(false);
    // Regular-expression characters and an unclosed brace are literal.
    expect(await glob("a.(b)+$[c].ts", "a.(b)+$[c].ts")).toBe(true);
    expect(await glob("a.(b)+$[c].ts", "aX(b)+$[c].ts")).toBe(false);
    expect(await glob("{x", "{x")).toBe(true);
    expect(await glob("{a*,b}", "a*")).toBe(true);
    expect(await glob("{a*,b}", "ax")).toBe(false);
  });

  it("matches a glob with many stars in linear time (it backtracked exponentially on a JavaScript RegExp)", async () => {
    const stars = `${"*a".repeat(10)}*b`;
    const many = join(cwd, "many");
    expect(await globFiles(cwd, stars, "many")).toBe(join(many, `${"a".repeat(45)}b`));
    const grep = await grepFiles(cwd, { pattern: "a", path: "many", glob: stars, caseInsensitive: false });
    expect(grep).toBe(`${join(many, `${"a".repeat(45)}b`)}:1:aab`);
    expect(await (await compileGlob(stars))("a".repeat(5000))).toBe(false);
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

  it("judges a path that does not exist yet by where it would be created, through symbolic links", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "cursor-bridge-elsewhere-"));
    try {
      symlinkSync(elsewhere, join(cwd, "linkdir"));
      symlinkSync(join(elsewhere, "not-yet.txt"), join(cwd, "dangling"));
      symlinkSync(join(cwd, "loop-b"), join(cwd, "loop-a"));
      symlinkSync(join(cwd, "loop-a"), join(cwd, "loop-b"));
      for (const path of ["linkdir/escaped.txt", "linkdir/new/deeper.txt", "dangling", "dangling/x", "loop-a/x"]) {
        await expect(insideCwd(cwd, path), path).rejects.toBeInstanceOf(OutsideCwdError);
      }
      const real = realpathSync(cwd);
      expect(await insideCwd(cwd, "src/brand-new.ts")).toBe(join(real, "src", "brand-new.ts"));
      expect(await insideCwd(cwd, "src/new-folder/x.ts")).toBe(join(real, "src", "new-folder", "x.ts"));
      expect(await insideCwd(cwd, "src/a.ts/not-a-folder")).toBe(join(real, "src", "a.ts", "not-a-folder"));
    } finally {
      for (const name of ["linkdir", "dangling", "loop-a", "loop-b"]) rmSync(join(cwd, name), { force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("takes absolute paths under a folder the editor names through a link (macOS /tmp), and refuses ../ from it", async () => {
    const links = mkdtempSync(join(tmpdir(), "cursor-bridge-linked-cwd-"));
    try {
      const linked = join(links, "project");
      symlinkSync(cwd, linked);
      const real = realpathSync(cwd);
      expect(await insideCwd(linked, join(linked, "src", "a.ts"))).toBe(join(real, "src", "a.ts"));
      expect(await insideCwd(linked, join(real, "src", "a.ts"))).toBe(join(real, "src", "a.ts"));
      expect(await listDirectory(linked, join(linked, "src", "deep"))).toBe(`${join(real, "src", "deep", "b.md")}`);
      for (const path of [join(linked, "..", "x"), join(linked, "escape"), join(links, "project-x", "a")]) {
        await expect(insideCwd(linked, path), path).rejects.toBeInstanceOf(OutsideCwdError);
      }
    } finally {
      rmSync(links, { recursive: true, force: true });
    }
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
