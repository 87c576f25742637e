import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDir, makeDirSync } from "./make-dir.js";

const root = mkdtempSync(join(tmpdir(), "cursor-bridge-make-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.each([
  ["makeDir", (path: string) => makeDir(path)],
  ["makeDirSync", async (path: string) => makeDirSync(path)],
])("%s", (name, make) => {
  it("creates missing parents (0700) and accepts an existing directory", async () => {
    const dir = join(root, name, "a", "b", "c");
    await make(dir);
    await make(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    if (process.platform !== "win32") expect(statSync(join(root, name, "a")).mode & 0o777).toBe(0o700);
  });

  it("fails with ENOTDIR when the path or a parent is a file", async () => {
    const file = join(root, `${name}-file`);
    writeFileSync(file, "");
    await expect(make(file)).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(make(join(file, "below"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });

  // Node 20's recursive mkdir never returns there: the kernel answers ENOENT with the parent present.
  it.skipIf(process.platform !== "linux")("ends with ENOENT under /proc instead of spinning", async () => {
    await expect(make("/proc/cursor-bridge-make-dir-test/x")).rejects.toMatchObject({ code: "ENOENT" });
  });
});
