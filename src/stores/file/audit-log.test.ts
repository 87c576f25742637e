import { appendFile, mkdtemp, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AuditEntry } from "../types.js";
import { AUDIT_FILE_NAME, createFileAuditLog } from "./audit-log.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function freshDir() {
  const dir = await mkdtemp(join(tmpdir(), "cb-audit-"));
  dirs.push(dir);
  return dir;
}

const entry = (n: number, pad = 0): AuditEntry => ({
  at: `2026-01-01T00:00:${String(n).padStart(2, "0")}Z`,
  actor: "anonymous",
  action: "admin.request",
  target: "/admin/keys",
  from: "127.0.0.1",
  detail: { n, pad: "é→".repeat(pad) },
});
const numbers = (entries: AuditEntry[]) => entries.map((e) => e.detail?.n);

describe("file audit log bounds", () => {
  it("rotates to audit.log.1 at its size, keeps one previous file, and reads across both", async () => {
    const dir = await freshDir();
    const lineBytes = Buffer.byteLength(`${JSON.stringify(entry(10))}\n`);
    const audit = createFileAuditLog({ dir, maxBytes: lineBytes * 10 });
    for (let n = 0; n < 35; n += 1) await audit.append(entry(n));
    expect((await readdir(dir)).sort()).toEqual([AUDIT_FILE_NAME, `${AUDIT_FILE_NAME}.1`]);
    for (const name of [AUDIT_FILE_NAME, `${AUDIT_FILE_NAME}.1`]) {
      expect((await stat(join(dir, name))).size).toBeLessThanOrEqual(lineBytes * 10);
    }
    // 35 entries at 10 a file: 30–34 in audit.log, 20–29 in audit.log.1, 0–19 rotated away.
    expect(numbers(await audit.read())).toEqual(Array.from({ length: 15 }, (_, i) => 20 + i));
    expect(numbers(await audit.read({ limit: 3 }))).toEqual([32, 33, 34]);
    expect(numbers(await audit.read({ limit: 8 }))).toEqual([27, 28, 29, 30, 31, 32, 33, 34]);
    expect(numbers(await audit.read({ limit: 100 }))).toHaveLength(15);
    expect(await audit.read({ limit: 0 })).toEqual([]);
  });

  it("reads the newest entries backwards across chunk edges, multi-byte text and torn lines alike", async () => {
    const dir = await freshDir();
    const audit = createFileAuditLog({ dir });
    // Entries of about 30 KB straddle the reader's 64 KiB chunks at every offset.
    for (let n = 0; n < 40; n += 1) await audit.append(entry(n, 5000 + n * 37));
    await appendFile(join(dir, AUDIT_FILE_NAME), '{"at":"torn\nnot json\n\n');
    await audit.append(entry(40));
    const all = await audit.read();
    expect(numbers(all)).toEqual(Array.from({ length: 41 }, (_, i) => i));
    for (const limit of [1, 2, 5, 17, 41, 50]) {
      expect(await audit.read({ limit })).toEqual(all.slice(-limit));
    }
  });

  it("an append a full disk cut short loses no later entry: the next starts a line of its own", async () => {
    const dir = await freshDir();
    const audit = createFileAuditLog({ dir });
    await audit.append(entry(1));
    // What a write cut short by a full disk leaves: the start of a line, no newline.
    await appendFile(join(dir, AUDIT_FILE_NAME), JSON.stringify(entry(2)).slice(0, 40));
    await audit.append(entry(3));
    expect(numbers(await audit.read())).toEqual([1, 3]);
    expect(numbers(await audit.read({ limit: 1 }))).toEqual([3]);
    // Another writer (an older version, another process) that appended after the tear on the same line: still read.
    await appendFile(
      join(dir, AUDIT_FILE_NAME),
      `${JSON.stringify(entry(4)).slice(0, 30)}${JSON.stringify(entry(5))}\n`,
    );
    expect(numbers(await audit.read())).toEqual([1, 3, 5]);
    expect(numbers(await audit.read({ limit: 1 }))).toEqual([5]);
  });

  it("reading the newest entries never reads the whole file (a 1 GiB head before them)", async () => {
    const dir = await freshDir();
    const path = join(dir, AUDIT_FILE_NAME);
    await writeFile(path, `${JSON.stringify(entry(0))}\n`, { mode: 0o600 });
    // A sparse gigabyte with no line end in it: a reader holding the file or the line whole would fail or stall.
    await truncate(path, 1024 * 1024 * 1024);
    await appendFile(path, `\n${JSON.stringify(entry(1))}\n${JSON.stringify(entry(2))}\n`);
    const audit = createFileAuditLog({ dir, maxBytes: 2 * 1024 * 1024 * 1024 });
    expect(numbers(await audit.read({ limit: 2 }))).toEqual([1, 2]);
  });

  it("a file left by another writer's rotation is appended to, not rotated again", async () => {
    const dir = await freshDir();
    const lineBytes = Buffer.byteLength(`${JSON.stringify(entry(10))}\n`);
    const first = createFileAuditLog({ dir, maxBytes: lineBytes * 3 });
    const second = createFileAuditLog({ dir, maxBytes: lineBytes * 3 });
    for (let n = 0; n < 3; n += 1) await first.append(entry(n));
    await Promise.all([first.append(entry(3)), second.append(entry(4))]);
    const kept = numbers(await first.read());
    // Both new entries survive whichever writer rotated; the three before them are in audit.log.1.
    expect(kept).toEqual(expect.arrayContaining([0, 1, 2, 3, 4]));
  });

  it("two writers rotating at once keep every entry (one rotation, across audit.log and audit.log.1)", async () => {
    // Every entry's line is the same length (n has two digits), so exactly 40 fill a file.
    const lineBytes = Buffer.byteLength(`${JSON.stringify(entry(10))}\n`);
    for (let round = 0; round < 20; round += 1) {
      const dir = await freshDir();
      const first = createFileAuditLog({ dir, maxBytes: lineBytes * 40 });
      const second = createFileAuditLog({ dir, maxBytes: lineBytes * 40 });
      for (let n = 10; n < 50; n += 1) await first.append(entry(n));
      // The file is full: each of these 40 appends finds it so and rotates, unless another rotated it first.
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => [first.append(entry(50 + i)), second.append(entry(70 + i))]).flat(),
      );
      const kept = numbers(await first.read()).sort();
      expect(kept, `round ${round}`).toEqual(Array.from({ length: 80 }, (_, i) => 10 + i));
    }
  }, 60_000);
});
