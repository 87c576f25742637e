import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capturingLogger } from "../../../test/support/capturing-logger.js";
import { sampleRecord } from "../../../test/support/conversation-record.js";
import { writeFileAtomic } from "./atomic-write.js";
import { createFileConversationStore, sizeOf } from "./conversation-store.js";

describe("file conversation store", () => {
  let dir: string;
  let now = 1_000_000;
  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), "cb-store-")), "conversations");
    now = 1_000_000;
  });
  afterEach(async () => rm(join(dir, ".."), { recursive: true, force: true }));

  const store = (ttlMs = 10_000) => createFileConversationStore({ dir, ttlMs, now: () => now });

  it("creates the directory 0700 and files 0600, leaving no temp files", async () => {
    await store().save(sampleRecord("conv-1", now));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const names = await readdir(dir);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^records-[0-9a-f]{8}-\d+-[0-9a-f]+-0\.log$/);
    expect((await stat(join(dir, names[0] ?? ""))).mode & 0o777).toBe(0o600);
  });

  it("keeps a record in memory only when it is small next to the cache (large ones are read from disk again)", async () => {
    const record = sampleRecord("conv-1", now);
    // Bytes plus the per-record and per-blob object overhead the cache charges.
    const bytes = sizeOf(record);
    expect(bytes).toBeGreaterThan(
      record.checkpoint.byteLength + [...record.blobs.values()].reduce((sum, b) => sum + b.byteLength, 0) + 512,
    );
    const roomy = createFileConversationStore({ dir, ttlMs: 10_000, now: () => now, cacheBytes: bytes * 8 });
    await roomy.save(record);
    await rm(dir, { recursive: true, force: true });
    expect((await roomy.load("conv-1"))?.conversationId).toBe("conv-1");
    const tight = createFileConversationStore({ dir, ttlMs: 10_000, now: () => now, cacheBytes: bytes * 2 });
    await tight.save(record);
    await rm(dir, { recursive: true, force: true });
    expect(await tight.load("conv-1")).toBeUndefined();
  });

  it("expires records after the TTL: a load misses them and the sweep counts them", async () => {
    await store().save(sampleRecord("conv-1", now));
    now += 10_001;
    expect(await store().load("conv-1")).toBeUndefined();
    const s = store();
    expect(await s.deleteExpired()).toBe(1);
    expect(await s.deleteExpired()).toBe(0);
    expect(await s.load("conv-1")).toBeUndefined();
  });

  it("deleteExpired removes only expired records and stale temp files", async () => {
    const s = store();
    await s.save(sampleRecord("conv-1", now));
    now += 5_000;
    await s.save({ ...sampleRecord("conv-1", now), conversationId: "conv-2" });
    await writeFile(join(dir, "leftover.json.abc.tmp"), "x");
    now += 6_000;
    expect(await s.deleteExpired()).toBe(1);
    expect(await s.load("conv-1")).toBeUndefined();
    expect(await s.load("conv-2")).toBeDefined();
  });

  it("treats an unreadable segment as missing", async () => {
    await store().save(sampleRecord("conv-1", now));
    const [name] = await readdir(dir);
    await writeFile(join(dir, name ?? ""), "{not json");
    expect(await store().load("conv-1")).toBeUndefined();
  });

  it("writes atomically: replaces content, and a failed rename leaves no temp file", async () => {
    await mkdir(dir, { recursive: true });
    const target = join(dir, "target.json");
    await writeFileAtomic(target, "old");
    await writeFileAtomic(target, "new");
    expect(await readFile(target, "utf8")).toBe("new");
    // A non-empty directory where the file should go makes the rename fail.
    await mkdir(join(dir, "occupied", "child"), { recursive: true });
    await expect(writeFileAtomic(join(dir, "occupied"), "x")).rejects.toThrow();
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(await readFile(target, "utf8")).toBe("new");
  });

  it("survives concurrent saves of the same conversation with one valid file", async () => {
    const s = store();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.save({ ...sampleRecord("conv-1", now), coveredMessages: i })),
    );
    const loaded = await s.load("conv-1");
    expect(loaded?.coveredMessages).toBeGreaterThanOrEqual(0);
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("file conversation store: bounds and sweep", () => {
  let dir: string;
  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), "cb-store-")), "conversations");
  });
  afterEach(async () => rm(join(dir, ".."), { recursive: true, force: true }));

  const capture = capturingLogger;

  it("sweeps from metadata: survives a directory where a file should be, logs each removal and why", async () => {
    let now = 1_000_000;
    const { logger, lines } = capture();
    const s = createFileConversationStore({ dir, ttlMs: 10_000, now: () => now, logger });
    await s.save(sampleRecord("conv-1", now));
    now += 5_000;
    await s.save({ ...sampleRecord("conv-1", now), conversationId: "conv-2" });
    await mkdir(join(dir, "looks-like-a-record.json"));
    await writeFile(join(dir, "empty.json"), "");
    now += 6_000;
    expect(await s.deleteExpired()).toBe(2);
    expect(await s.load("conv-2")).toBeDefined();
    expect(lines.map((l) => l.message).sort()).toEqual([
      "removing an empty conversation file",
      "removing an expired conversation",
      "skipping an entry of the conversation directory that is not a file",
    ]);
    expect((await readdir(dir)).sort()).toHaveLength(2);
  });

  it("evicts the oldest conversations beyond the entry cap and the size cap", async () => {
    let now = 1_000_000;
    const { logger, lines } = capture();
    const s = createFileConversationStore({ dir, now: () => now, logger, maxEntries: 2 });
    for (const id of ["a", "b", "c"]) {
      now += 1_000;
      await s.save({ ...sampleRecord("conv-1", now), conversationId: id });
    }
    expect(await s.deleteExpired()).toBe(1);
    expect(await createFileConversationStore({ dir, now: () => now }).load("a")).toBeUndefined();
    expect(await s.load("c")).toBeDefined();
    expect(lines[0]?.fields?.reason).toBe("entry cap");
    const small = createFileConversationStore({ dir, now: () => now, logger, maxTotalBytes: 1 });
    expect(await small.deleteExpired()).toBe(2);
    expect(lines.at(-1)?.fields?.reason).toBe("size cap");
  });

  it("writes nothing for an unchanged record and serves loads from memory", async () => {
    const now = 1_000_000;
    const s = createFileConversationStore({ dir, now: () => now });
    await s.save(sampleRecord("conv-1", now));
    const [name] = await readdir(dir);
    const path = join(dir, name ?? "");
    const before = (await stat(path)).size;
    await s.save(sampleRecord("conv-1", now + 50));
    expect((await stat(path)).size).toBe(before);
    await writeFile(path, "{not json");
    expect((await s.load("conv-1"))?.coveredMessages).toBe(2);
  });
});
