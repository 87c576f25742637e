import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  DIRECT_WRITE_POLICY,
  directWritesAllowed,
  resumeDirectWrites,
  SYNC_WRITE_MAX_BYTES,
  writeFileAtomic,
} from "./atomic-write.js";

describe("writeFileAtomic", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cb-atomic-"));
    // A direct write made slow by a loaded machine in an earlier test pauses direct writes for a minute (module
    // state): each test starts with them allowed.
    resumeDirectWrites();
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

  it("sends writes to the thread pool for a while after slow direct writes in a row, and still writes them whole", async () => {
    const saved = { ...DIRECT_WRITE_POLICY };
    try {
      // Every direct write counts as slow, preempted or not: the first two are direct, the next ones go through the
      // pool.
      DIRECT_WRITE_POLICY.slowMs = -1;
      DIRECT_WRITE_POLICY.slowInRow = 2;
      DIRECT_WRITE_POLICY.discountPreemption = false;
      expect(directWritesAllowed()).toBe(true);
      await writeFileAtomic(join(dir, "zero.json"), "zero");
      expect(directWritesAllowed()).toBe(true);
      await writeFileAtomic(join(dir, "first.json"), "one");
      expect(directWritesAllowed()).toBe(false);
      await writeFileAtomic(join(dir, "second.json"), [new Uint8Array([1, 2, 3])], { mtimeMs: 1_700_000_000_000 });
      expect(await readFile(join(dir, "first.json"), "utf8")).toBe("one");
      expect([...(await readFile(join(dir, "second.json")))]).toEqual([1, 2, 3]);
      expect((await stat(join(dir, "second.json"))).mode & 0o777).toBe(0o600);
      // After the pause, direct writes are tried again.
      DIRECT_WRITE_POLICY.poolForMs = 0;
      resumeDirectWrites();
      DIRECT_WRITE_POLICY.slowMs = saved.slowMs;
      await writeFileAtomic(join(dir, "third.json"), "three");
      expect(directWritesAllowed()).toBe(true);
    } finally {
      Object.assign(DIRECT_WRITE_POLICY, saved);
      resumeDirectWrites();
    }
  });

  it("does not pause direct writes for a slow write during which the process was preempted", async () => {
    const saved = { ...DIRECT_WRITE_POLICY };
    // The process's involuntary context switches as getrusage(2) reports them: one more after every call when
    // `preempted`, so each write seems to have lost its core to another process.
    let switches = 0;
    let preempted = true;
    const usage = process.resourceUsage();
    const spy = vi.spyOn(process, "resourceUsage").mockImplementation(() => {
      if (preempted) switches += 1;
      return { ...usage, involuntaryContextSwitches: switches };
    });
    try {
      DIRECT_WRITE_POLICY.slowMs = -1;
      DIRECT_WRITE_POLICY.slowInRow = 1;
      await writeFileAtomic(join(dir, "preempted.json"), "one");
      expect(directWritesAllowed()).toBe(true);
      // The same slow write with the core to itself: the disk is slow, the next writes go through the pool.
      preempted = false;
      await writeFileAtomic(join(dir, "slow.json"), "two");
      expect(directWritesAllowed()).toBe(false);
      expect(await readFile(join(dir, "preempted.json"), "utf8")).toBe("one");
      expect(await readFile(join(dir, "slow.json"), "utf8")).toBe("two");
    } finally {
      spy.mockRestore();
      Object.assign(DIRECT_WRITE_POLICY, saved);
      resumeDirectWrites();
    }
  });

  it("keeps direct writes after one slow write between fast ones", async () => {
    const saved = { ...DIRECT_WRITE_POLICY };
    try {
      DIRECT_WRITE_POLICY.discountPreemption = false;
      for (let i = 0; i < 4; i++) {
        // Slow, then fast (the limit far above any write): the row of slow writes never reaches two.
        DIRECT_WRITE_POLICY.slowMs = i % 2 === 0 ? -1 : 60_000;
        DIRECT_WRITE_POLICY.slowInRow = 2;
        await writeFileAtomic(join(dir, `w${i}.json`), String(i));
        expect(directWritesAllowed()).toBe(true);
      }
    } finally {
      Object.assign(DIRECT_WRITE_POLICY, saved);
      resumeDirectWrites();
    }
  });

  it("counts a string's UTF-8 bytes, not its characters, against the direct-write limit", async () => {
    // 100,000 three-byte characters: 300,000 bytes, over the limit although the string is shorter than it.
    const target = join(dir, "wide.txt");
    await writeFileAtomic(target, "€".repeat(100_000));
    expect((await stat(target)).size).toBe(300_000);
  });
});
