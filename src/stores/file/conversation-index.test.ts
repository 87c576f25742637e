import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DIRECT_WRITE_POLICY, resumeDirectWrites, writeFileAtomic } from "./atomic-write.js";
import { createFileConversationIndex } from "./conversation-index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "cb-index-"));
  dirs.push(dir);
  return dir;
}
const lines = (dir: string) => readFileSync(join(dir, "index.jsonl"), "utf8").split("\n").filter(Boolean);

describe("file conversation index", () => {
  it("is durable once remember resolves and is read back by a new instance", async () => {
    const dir = tempDir();
    const index = await createFileConversationIndex({ dir });
    await index.remember("k1", "c1");
    expect(lines(dir)).toHaveLength(1);
    const reopened = await createFileConversationIndex({ dir });
    expect(await reopened.lookup("k1")).toBe("c1");
  });

  it("an append a full disk cut short loses no later entry (the next starts a line; one glued on is still read)", async () => {
    const dir = tempDir();
    const index = await createFileConversationIndex({ dir });
    await index.remember("a", "1");
    // What a write cut short by a full disk leaves: the start of a line, no newline; then another process's whole line.
    appendFileSync(
      join(dir, "index.jsonl"),
      `{"k":"torn","c":"x${JSON.stringify({ k: "b", c: "2", t: Date.now() })}\n`,
    );
    appendFileSync(join(dir, "index.jsonl"), '{"k":"torn again');
    const reopened = await createFileConversationIndex({ dir });
    expect(await reopened.lookup("b")).toBe("2");
    await reopened.remember("c", "3");
    const third = await createFileConversationIndex({ dir });
    expect([await third.lookup("a"), await third.lookup("b"), await third.lookup("c")]).toEqual(["1", "2", "3"]);
    expect(await third.lookup("torn")).toBeUndefined();
  });

  it("batches the remembers of one tick into one append and writes nothing for an unchanged entry", async () => {
    const dir = tempDir();
    const index = await createFileConversationIndex({ dir });
    await Promise.all([index.remember("a", "1"), index.remember("b", "2"), index.remember("c", "3")]);
    expect(lines(dir)).toHaveLength(3);
    await index.remember("a", "1");
    expect(lines(dir)).toHaveLength(3);
    await index.remember("a", "9");
    expect(await (await createFileConversationIndex({ dir })).lookup("a")).toBe("9");
  });

  it("appends through the thread pool while direct writes are paused, with the same result", async () => {
    const dir = tempDir();
    const saved = { ...DIRECT_WRITE_POLICY };
    try {
      DIRECT_WRITE_POLICY.slowMs = -1;
      DIRECT_WRITE_POLICY.slowInRow = 1;
      DIRECT_WRITE_POLICY.discountPreemption = false;
      const index = await createFileConversationIndex({ dir });
      await index.remember("a", "1");
      await Promise.all([index.remember("b", "2"), index.remember("c", "3")]);
      expect(lines(dir)).toHaveLength(3);
      const reopened = await createFileConversationIndex({ dir });
      expect([await reopened.lookup("a"), await reopened.lookup("b"), await reopened.lookup("c")]).toEqual([
        "1",
        "2",
        "3",
      ]);
    } finally {
      Object.assign(DIRECT_WRITE_POLICY, saved);
      resumeDirectWrites();
    }
  });

  it("skips a torn or foreign line with a warning, and forgets entries past the TTL", async () => {
    const dir = tempDir();
    let now = 1_000;
    const index = await createFileConversationIndex({ dir, now: () => now, ttlMs: 500 });
    await index.remember("old", "c-old");
    now = 1_400;
    await index.remember("new", "c-new");
    appendFileSync(join(dir, "index.jsonl"), '{"k":"torn","c":');
    now = 1_600;
    const warnings: string[] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (message: string) => warnings.push(message),
      error: () => {},
      child: () => logger,
    };
    const reopened = await createFileConversationIndex({ dir, now: () => now, ttlMs: 500, logger });
    expect(await reopened.lookup("old")).toBeUndefined();
    expect(await reopened.lookup("new")).toBe("c-new");
    expect(await reopened.lookup("torn")).toBeUndefined();
    expect(warnings).toEqual(["skipped unreadable lines of the conversation index"]);
  });

  it("caps entries (least recently used first) and compacts the log", async () => {
    const dir = tempDir();
    const index = await createFileConversationIndex({ dir, maxEntries: 10 });
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => index.remember(`k${i}`, `c${round}-${i}`)));
    }
    expect(index.size()).toBe(10);
    expect(lines(dir).length).toBeLessThan(2100);
    const reopened = await createFileConversationIndex({ dir, maxEntries: 10 });
    expect(reopened.size()).toBe(10);
    expect(await reopened.lookup("k999")).toBe("c2-999");
    expect(await reopened.lookup("k0")).toBeUndefined();
  });

  it("keeps the log open, and appends to the new file after another process's compaction replaced it", async () => {
    const dir = tempDir();
    const index = await createFileConversationIndex({ dir });
    await index.remember("a", "1");
    // What a compaction elsewhere does: the live lines rewritten to a temp file renamed over the log.
    await writeFileAtomic(join(dir, "index.jsonl"), `${lines(dir)[0]}\n`);
    await index.remember("b", "2");
    expect(lines(dir)).toHaveLength(2);
    rmSync(join(dir, "index.jsonl"));
    await index.remember("c", "3");
    expect(lines(dir)).toHaveLength(1);
    await index.close();
    const reopened = await createFileConversationIndex({ dir });
    expect(await reopened.lookup("c")).toBe("3");
    await reopened.close();
  });
});
