/**
 * A rebuild keeps the chunks of the build before it: a server started from the clone before the rebuild has not
 * loaded all of its chunks yet (each door's handlers load on its first request), and its main.js names its own. The
 * build before that one is removed. Real builds, in a copy of the package whose src/ changes between them.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const copy = mkdtempSync(join(tmpdir(), "cursor-bridge-rebuild-"));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** The files of dist/'s chunk and script folders, relative to dist/. */
function chunkFiles(): Set<string> {
  const dist = join(copy, "dist");
  const files = ["chunks", "script/chunks", "script"].flatMap((dir) =>
    readdirSync(join(dist, dir), { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => `${dir}/${entry.name}`),
  );
  return new Set(files);
}

function buildCopy(mark: string): Set<string> {
  // A side effect in serve's lazily loaded runtime changes its chunk (and its hash) in every build.
  appendFileSync(
    join(copy, "src", "cli", "serve-runtime.ts"),
    `\n(globalThis as Record<string, unknown>).m = "${mark}";\n`,
  );
  const built = spawnSync(process.execPath, ["tools/build.mjs"], { cwd: copy, encoding: "utf8", timeout: 300_000 });
  expect(built.status, `${built.stdout}\n${built.stderr}`).toBe(0);
  const list = JSON.parse(readFileSync(join(copy, "dist", ".builds.json"), "utf8")) as { builds: string[][] };
  return new Set(list.builds.at(-1));
}

describe("rebuilding dist/", () => {
  it("keeps the previous build's chunks and removes the ones of the build before it", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] };
    for (const part of ["src", "bin", "package.json"]) cpSync(join(root, part), join(copy, part), { recursive: true });
    for (const file of manifest.files.filter((entry) => entry.startsWith("tools/"))) {
      cpSync(join(root, file), join(copy, file), { recursive: true });
    }
    mkdirSync(join(copy, "node_modules"));
    for (const name of readdirSync(join(root, "node_modules"))) {
      symlinkSync(join(root, "node_modules", name), join(copy, "node_modules", name));
    }

    const first = buildCopy("1");
    expect([...chunkFiles()].sort()).toEqual([...first].sort());
    const second = buildCopy("2");
    const firstOnly = [...first].filter((file) => !second.has(file));
    expect(firstOnly.length).toBeGreaterThan(0);
    // After the second build, both builds' files are there.
    expect([...chunkFiles()].sort()).toEqual([...new Set([...first, ...second])].sort());
    const third = buildCopy("3");
    // After the third, the second's and the third's: what only the first had is gone.
    expect([...chunkFiles()].sort()).toEqual([...new Set([...second, ...third])].sort());
    for (const file of firstOnly.filter((name) => !third.has(name))) expect(chunkFiles().has(file)).toBe(false);
  }, 600_000);
});
