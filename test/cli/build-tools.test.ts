/**
 * An install without dev dependencies (`npm install --omit=dev`) still builds dist/: without esbuild and js-tiktoken
 * in node_modules, tools/build.mjs installs tools/build/ (their pinned versions) with npm, builds with it and removes
 * it again, so the install keeps only what it runs. Here in a copy of the package whose node_modules holds every
 * package but those two.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-omit-dev-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** The build's own tools: what an install without dev dependencies lacks. */
const BUILD_ONLY = new Set(["esbuild", "@esbuild", "js-tiktoken", ".bin"]);

describe("building without dev dependencies", () => {
  it("installs tools/build/ for the build, builds dist/ and removes tools/build/node_modules again", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      files: string[];
      devDependencies: Record<string, string>;
    };
    for (const part of ["src", "bin", "package.json"]) cpSync(join(root, part), join(copy, part), { recursive: true });
    for (const file of manifest.files.filter((entry) => entry.startsWith("tools/"))) {
      cpSync(join(root, file), join(copy, file), { recursive: true });
    }
    mkdirSync(join(copy, "node_modules"));
    for (const name of readdirSync(join(root, "node_modules"))) {
      if (!BUILD_ONLY.has(name)) symlinkSync(join(root, "node_modules", name), join(copy, "node_modules", name));
    }
    // tools/build/ pins what the root's dev dependencies pin, so both kinds of install build the same dist/.
    const tools = JSON.parse(readFileSync(join(root, "tools", "build", "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const [name, version] of Object.entries(tools.dependencies)) {
      expect(manifest.devDependencies[name], name).toBe(version);
    }

    const built = spawnSync(process.execPath, ["tools/build.mjs"], { cwd: copy, encoding: "utf8", timeout: 300_000 });
    expect(built.status, `${built.stdout}\n${built.stderr}`).toBe(0);
    expect(built.stderr).toMatch(/Installing tools\/build\//);
    expect(existsSync(join(copy, "dist", "main.js"))).toBe(true);
    expect(
      readFileSync(join(copy, "dist", "o200k_base.tokens")).equals(
        readFileSync(join(root, "dist", "o200k_base.tokens")),
      ),
    ).toBe(true);
    expect(existsSync(join(copy, "tools", "build", "node_modules"))).toBe(false);
  }, 360_000);
});
