import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SYNC_WRITE_MAX_BYTES, writeFileAtomic } from "./atomic-write.js";

describe("writeFileAtomic", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cb-atomic-"));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  // Small contents take the direct system calls, large ones the thread pool: both must write the same file.
  const sizes = [
    ["small (direct system calls)", 1000],
    ["at the limit", SYNC_WRITE_MAX_BYTES],
    ["large (thread pool)", SYNC_WRITE_MAX_BYTES + 1],
  ] as const;

  for (const [label, size] of sizes) {
    it(`writes byte chunks with mode 0600 and the given mtime: ${label}`, async () => {
      const target = join(dir, "record.bin");
      const half = Math.floor(size / 2);
      const chunks = [new Uint8Array(half).fill(1), new Uint8Array(size - half).fill(2)];
      await writeFileAtomic(target, chunks, { mtimeMs: 1_700_000_000_000 });
      const bytes = await readFile(target);
      expect(bytes.byteLength).toBe(size);
      expect(bytes[0]).toBe(1);
      expect(bytes[size - 1]).toBe(2);
      const info = await stat(target);
      expect(info.mode & 0o777).toBe(0o600);
      expect(Math.round(info.mtimeMs)).toBe(1_700_000_000_000);
      expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    });

    it(`writes text, replacing the old content, and leaves no temp file when the rename fails: ${label}`, async () => {
      const target = join(dir, "text.json");
      await writeFileAtomic(target, "old");
      const text = "é".repeat(Math.ceil(size / 2));
      await writeFileAtomic(target, text);
      expect(await readFile(target, "utf8")).toBe(text);
      expect((await stat(target)).mode & 0o777).toBe(0o600);
      await mkdir(join(dir, "occupied", "child"), { recursive: true });
      await expect(writeFileAtomic(join(dir, "occupied"), text)).rejects.toThrow();
      expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    });
  }

  it("counts a string's UTF-8 bytes, not its characters, against the direct-write limit", async () => {
    // 100,000 three-byte characters: 300,000 bytes, over the limit although the string is shorter than it.
    const target = join(dir, "wide.txt");
    await writeFileAtomic(target, "€".repeat(100_000));
    expect((await stat(target)).size).toBe(300_000);
  });
});
