/**
 * The file conversation store's record log (conversation-store.ts, record-log.ts): restarts, several store instances
 * on one directory as several processes would use it, torn tails, corrupt payloads, legacy files, compaction.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { capturingLogger } from "../../../test/support/capturing-logger.js";
import { sampleRecord } from "../../../test/support/conversation-record.js";
import type { ConversationRecord } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { createFileConversationStore, type FileConversationStoreOptions } from "./conversation-store.js";
import { encodeRecord } from "./record-file.js";
import { decodeHeader, encodeHeader, HEADER_BYTES, KIND_RECORD, scanSegment } from "./record-log.js";

const T0 = 1_000_000;

describe("record log entries", () => {
  it("a header round-trips and a damaged one is refused", () => {
    const name = createHash("sha256").update("conv").digest();
    const header = encodeHeader(KIND_RECORD, name, 1234.5, 99);
    expect(header.byteLength).toBe(HEADER_BYTES);
    expect(decodeHeader(header)).toEqual({
      kind: KIND_RECORD,
      name: name.toString("hex"),
      updatedAt: 1234.5,
      payloadBytes: 99,
    });
    const damaged = Buffer.from(header);
    damaged[20] = (damaged[20] ?? 0) ^ 1;
    expect(decodeHeader(damaged)).toBeUndefined();
  });
});

describe("file conversation store: record log", () => {
  let dir: string;
  let now = T0;
  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), "cb-log-")), "conversations");
    now = T0;
  });
  afterEach(async () => rm(join(dir, ".."), { recursive: true, force: true }));

  const open = (options: Partial<FileConversationStoreOptions> = {}) =>
    createFileConversationStore({ dir, now: () => now, ttlMs: 100_000, ...options });
  /** A store that caches nothing, so every load reads the log. */
  const uncached = (options: Partial<FileConversationStoreOptions> = {}) => open({ cacheBytes: 0, ...options });
  const record = (id: string, at: number, extra = "x"): ConversationRecord => ({
    ...sampleRecord(id, at, extra),
    coveredMessages: at - T0,
  });
  const segmentsOf = async () => (await readdir(dir)).filter((name) => name.endsWith(".log")).sort();
  const capture = capturingLogger;

  it("appends every save to one open segment, and a new instance finds the newest of each", async () => {
    const s = open();
    for (let i = 1; i <= 5; i++) {
      await s.save(record("a", T0 + i, `a${i}`));
      await s.save(record("b", T0 + i, `b${i}`));
    }
    expect(await segmentsOf()).toHaveLength(1);
    const restarted = uncached();
    expect((await restarted.load("a"))?.coveredMessages).toBe(5);
    expect((await restarted.load("b"))?.coveredMessages).toBe(5);
    expect(await restarted.load("c")).toBeUndefined();
  });

  it("two instances on one directory: each finds what the other saved, and the newest save wins", async () => {
    const one = uncached();
    const two = uncached();
    await one.save(record("shared", T0 + 1, "one"));
    expect(await two.load("missing")).toBeUndefined(); // two has scanned the directory once already
    expect((await two.load("shared"))?.coveredMessages).toBe(1);
    await two.save(record("shared", T0 + 2, "two"));
    expect((await one.load("shared"))?.coveredMessages).toBe(2);
    expect((await uncached().load("shared"))?.coveredMessages).toBe(2);
    expect(await segmentsOf()).toHaveLength(2);
  });

  it("a delete is a tombstone: the conversation stays gone for other instances and after a restart", async () => {
    const s = open();
    await s.save(record("gone", T0 + 1));
    await s.save(record("kept", T0 + 1));
    await s.delete("gone");
    expect(await s.load("gone")).toBeUndefined();
    const again = uncached();
    expect(await again.load("gone")).toBeUndefined();
    expect(await again.load("kept")).toBeDefined();
    // A later save of the same conversation comes back.
    now += 10;
    await again.save(record("gone", T0 + 10));
    expect((await uncached().load("gone"))?.coveredMessages).toBe(10);
  });

  it("a torn tail (a crash in the middle of an append) loses only that entry; the store keeps working", async () => {
    const s = open();
    await s.save(record("first", T0 + 1));
    await s.save(record("second", T0 + 2));
    const [segment] = await segmentsOf();
    const path = join(dir, segment ?? "");
    await truncate(path, (await stat(path)).size - 10);
    const restarted = uncached();
    expect((await restarted.load("first"))?.coveredMessages).toBe(1);
    expect(await restarted.load("second")).toBeUndefined();
    await restarted.save(record("third", T0 + 3));
    await restarted.save(record("second", T0 + 4));
    const third = uncached();
    expect((await third.load("first"))?.coveredMessages).toBe(1);
    expect((await third.load("second"))?.coveredMessages).toBe(4);
    expect((await third.load("third"))?.coveredMessages).toBe(3);
  });

  it("a payload that does not decode is logged and treated as missing, here and in other instances", async () => {
    await open().save(record("bad", T0 + 1));
    const [segment] = await segmentsOf();
    const path = join(dir, segment ?? "");
    const bytes = await readFile(path);
    bytes[HEADER_BYTES] = (bytes[HEADER_BYTES] ?? 0) ^ 0xff; // the record's magic
    await writeFile(path, bytes);
    const { logger, lines } = capture();
    expect(await uncached({ logger }).load("bad")).toBeUndefined();
    expect(lines.map((line) => line.message)).toEqual(["removing a corrupt conversation record"]);
    expect(await uncached().load("bad")).toBeUndefined();
  });

  it("reads a legacy <sha256>.json file (formats 2 and 1), then moves the conversation to the log", async () => {
    await mkdir(dir, { recursive: true });
    const fileOf = (id: string) => join(dir, `${createHash("sha256").update(id).digest("hex")}.json`);
    await writeFileAtomic(fileOf("v2"), encodeRecord(record("v2", T0 + 1)), { mtimeMs: T0 + 1 });
    const v1 = sampleRecord("v1", T0 + 1);
    const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
    await writeFile(
      fileOf("v1"),
      JSON.stringify({
        version: 1,
        conversationId: "v1",
        checkpoint: base64(v1.checkpoint),
        coveredMessages: 7,
        fingerprint: "f",
        updatedAt: T0 + 1,
        blobs: Object.fromEntries([...v1.blobs].map(([id, data]) => [id, base64(data)])),
      }),
    );
    const s = uncached();
    expect((await s.load("v2"))?.coveredMessages).toBe(1);
    expect((await s.load("v1"))?.coveredMessages).toBe(7);
    await s.save(record("v2", T0 + 5));
    await expect(stat(fileOf("v2"))).rejects.toMatchObject({ code: "ENOENT" });
    expect((await uncached().load("v2"))?.coveredMessages).toBe(5);
    // The sweep still counts, expires and caps legacy files next to the log's records.
    await utimes(fileOf("v1"), (T0 + 1) / 1000, (T0 + 1) / 1000);
    now = T0 + 200_000;
    expect(await uncached().deleteExpired()).toBe(2);
    await expect(stat(fileOf("v1"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("caps count the log's records and the legacy files together, oldest first", async () => {
    const s = open({ maxEntries: 2 });
    for (const [i, id] of ["a", "b", "c"].entries()) await s.save(record(id, T0 + i + 1));
    expect(await s.deleteExpired()).toBe(1);
    const fresh = uncached();
    expect(await fresh.load("a")).toBeUndefined();
    expect(await fresh.load("c")).toBeDefined();
  });

  it("compaction re-appends the live entries of a sealed segment and removes it; the directory shrinks", async () => {
    const { logger } = capture();
    // Small segments: one holds three entries of these records before it is sealed.
    const entryBytes = HEADER_BYTES + encodeRecord(record("a", T0 + 1)).reduce((n, c) => n + c.byteLength, 0);
    const s = uncached({ segmentBytes: entryBytes * 3, logger });
    for (let round = 0; round < 6; round++) {
      for (const id of ["a", "b"]) await s.save(record(id, T0 + round * 2 + (id === "a" ? 1 : 2)));
    }
    await s.save(record("c", T0 + 20));
    const before = await segmentsOf();
    expect(before.length).toBeGreaterThanOrEqual(4);
    const bytesBefore = (await Promise.all(before.map((name) => stat(join(dir, name))))).reduce(
      (n, info) => n + info.size,
      0,
    );
    expect(await s.deleteExpired()).toBe(0);
    const after = await segmentsOf();
    const bytesAfter = (await Promise.all(after.map((name) => stat(join(dir, name))))).reduce(
      (n, info) => n + info.size,
      0,
    );
    expect(after.length).toBeLessThan(before.length);
    expect(bytesAfter).toBeLessThan(bytesBefore / 2);
    const fresh = uncached();
    expect((await fresh.load("a"))?.coveredMessages).toBe(11);
    expect((await fresh.load("b"))?.coveredMessages).toBe(12);
    expect((await fresh.load("c"))?.coveredMessages).toBe(20);
  });

  it("another instance still reads a record whose segment was compacted away under it", async () => {
    const entryBytes = HEADER_BYTES + encodeRecord(record("x", T0 + 1)).reduce((n, c) => n + c.byteLength, 0);
    const writer = uncached({ segmentBytes: entryBytes * 3 });
    await writer.save(record("x", T0 + 1));
    await writer.save(record("y", T0 + 2));
    await writer.save(record("z", T0 + 3)); // sealed: x, y, z
    const reader = uncached();
    expect((await reader.load("x"))?.coveredMessages).toBe(1); // the reader's map points into the first segment
    await writer.save(record("y", T0 + 4));
    await writer.save(record("z", T0 + 5)); // the first segment is now one third live
    const first = (await segmentsOf())[0] ?? "";
    await writer.deleteExpired();
    expect(await segmentsOf()).not.toContain(first);
    expect((await reader.load("x"))?.coveredMessages).toBe(1);
    expect((await reader.load("z"))?.coveredMessages).toBe(5);
  });

  it("a segment of a live owner is never removed; one whose owner died is, once nothing in it is live", async () => {
    const first = uncached();
    await first.save(record("x", T0 + 1));
    const [firstSegment] = await segmentsOf();
    const second = uncached();
    await second.save(record("x", T0 + 2));
    await second.deleteExpired();
    // first (this process, alive) has not sealed its segment: kept although nothing in it is live.
    expect(await segmentsOf()).toContain(firstSegment);
    // The same segment left by a process that is gone (no pid is that large).
    const orphan = "records-999999999-0a0b0c0d-0.log";
    await rename(join(dir, firstSegment ?? ""), join(dir, orphan));
    const third = uncached();
    expect((await third.load("x"))?.coveredMessages).toBe(2);
    await third.deleteExpired();
    expect(await segmentsOf()).not.toContain(orphan);
    expect((await uncached().load("x"))?.coveredMessages).toBe(2);
  });

  it("a segment of another host (or container) is left alone until it has been quiet longer than the TTL", async () => {
    const first = uncached();
    await first.save(record("x", T0 + 1));
    const [segment] = await segmentsOf();
    // Another host's name, with a pid that does not exist here: by pid alone it would count as gone.
    const foreign = "records-00000000-999999999-0a0b0c0d-0.log";
    await rename(join(dir, segment ?? ""), join(dir, foreign));
    const second = uncached();
    await second.save(record("x", T0 + 2));
    await second.deleteExpired();
    expect(await segmentsOf()).toContain(foreign);
    // Quiet for longer than the TTL (100 s here): everything it held has expired, so it may go.
    const past = (now - 200_000) / 1000;
    await utimes(join(dir, foreign), past, past);
    await uncached().deleteExpired();
    expect(await segmentsOf()).not.toContain(foreign);
    expect((await uncached().load("x"))?.coveredMessages).toBe(2);
  });

  it("a segment with this process's pid but no store of it is an earlier process's (a container's pid 1)", async () => {
    const first = uncached();
    await first.save(record("x", T0 + 1));
    const [segment] = await segmentsOf();
    const earlier = `records-${process.pid}-ffffffff-0.log`;
    await rename(join(dir, segment ?? ""), join(dir, earlier));
    const second = uncached();
    await second.save(record("x", T0 + 2));
    await second.deleteExpired();
    expect(await segmentsOf()).not.toContain(earlier);
    expect((await uncached().load("x"))?.coveredMessages).toBe(2);
  });

  it("a save whose segment was removed under it goes again to a new segment", async () => {
    const s = uncached();
    await s.save(record("a", T0 + 1));
    const [segment] = await segmentsOf();
    await rm(join(dir, segment ?? ""));
    await s.save(record("b", T0 + 2));
    const [replacement] = await segmentsOf();
    expect(replacement).not.toBe(segment);
    expect((await uncached().load("b"))?.coveredMessages).toBe(2);
    // The directory itself removed: made again on the next save.
    await rm(dir, { recursive: true });
    await s.save(record("c", T0 + 3));
    expect((await uncached().load("c"))?.coveredMessages).toBe(3);
  });

  it("scans headers without reading every record, and stops at garbage", async () => {
    const s = open();
    await s.save(record("a", T0 + 1));
    await s.save(record("b", T0 + 2));
    const [segment] = await segmentsOf();
    const path = join(dir, segment ?? "");
    const full = await scanSegment(path, 0);
    expect(full.entries.map((entry) => entry.updatedAt)).toEqual([T0 + 1, T0 + 2]);
    expect(full.broken).toBe(false);
    await writeFile(path, Buffer.concat([await readFile(path), Buffer.alloc(HEADER_BYTES, 7)]));
    const garbage = await scanSegment(path, 0);
    expect(garbage.entries).toHaveLength(2);
    expect(garbage.broken).toBe(true);
    expect(garbage.end).toBe(full.end);
  });
});
