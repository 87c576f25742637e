import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ConversationStateStructureSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { blobIdOf, toHex } from "./blob-store.js";
import { type ConversationRecord, createMemoryConversationStore } from "./conversation-store.js";
import { createFileConversationStore, writeFileAtomic } from "./file-conversation-store.js";

const encoder = new TextEncoder();

/** A checkpoint referencing a root prompt blob and a turn blob that itself references a user-message blob. */
function sampleRecord(now: number): ConversationRecord {
  const prompt = encoder.encode('{"role":"system","content":"hi"}');
  const userMessage = encoder.encode("user message bytes");
  const turn = toBinary(
    ConversationTurnStructureSchema,
    create(ConversationTurnStructureSchema, {
      turn: { case: "agentConversationTurn", value: { userMessage: blobIdOf(userMessage), steps: [] } },
    }),
  );
  const orphan = encoder.encode("nobody references me");
  const checkpoint = toBinary(
    ConversationStateStructureSchema,
    create(ConversationStateStructureSchema, { rootPromptMessagesJson: [blobIdOf(prompt)], turns: [blobIdOf(turn)] }),
  );
  const blobs = new Map([prompt, userMessage, turn, orphan].map((data) => [toHex(blobIdOf(data)), data] as const));
  return { conversationId: "conv-1", checkpoint, coveredMessages: 2, fingerprint: "f", blobs, updatedAt: now };
}

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
    await store().save(sampleRecord(now));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const names = await readdir(dir);
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    expect((await stat(join(dir, names[0] ?? ""))).mode & 0o777).toBe(0o600);
  });

  it("round-trips the checkpoint and keeps only reachable blobs (GC)", async () => {
    const record = sampleRecord(now);
    await store().save(record);
    const loaded = await store().load("conv-1");
    expect(loaded?.checkpoint).toEqual(record.checkpoint);
    expect(loaded?.coveredMessages).toBe(2);
    expect(loaded?.fingerprint).toBe("f");
    // prompt, turn and the user message the turn references survive; the orphan is collected.
    expect(loaded?.blobs.size).toBe(3);
    const orphanId = toHex(blobIdOf(encoder.encode("nobody references me")));
    expect(loaded?.blobs.has(orphanId)).toBe(false);
    for (const [id, data] of loaded?.blobs ?? []) expect(toHex(blobIdOf(data))).toBe(id);
  });

  it("expires records after the TTL and removes them", async () => {
    await store().save(sampleRecord(now));
    now += 10_001;
    expect(await store().load("conv-1")).toBeUndefined();
    expect(await readdir(dir)).toHaveLength(0);
  });

  it("deleteExpired removes only expired records and stale temp files", async () => {
    const s = store();
    await s.save(sampleRecord(now));
    now += 5_000;
    await s.save({ ...sampleRecord(now), conversationId: "conv-2" });
    await writeFile(join(dir, "leftover.json.abc.tmp"), "x");
    now += 6_000;
    expect(await s.deleteExpired()).toBe(1);
    expect(await s.load("conv-1")).toBeUndefined();
    expect(await s.load("conv-2")).toBeDefined();
  });

  it("treats an unreadable file as missing", async () => {
    await store().save(sampleRecord(now));
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
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.save({ ...sampleRecord(now), coveredMessages: i })));
    const loaded = await s.load("conv-1");
    expect(loaded?.coveredMessages).toBeGreaterThanOrEqual(0);
    expect((await readdir(dir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });
});

describe("memory conversation store", () => {
  it("applies the same GC and TTL", async () => {
    let now = 0;
    const s = createMemoryConversationStore({ ttlMs: 100, now: () => now });
    await s.save(sampleRecord(now));
    expect((await s.load("conv-1"))?.blobs.size).toBe(3);
    now = 101;
    expect(await s.load("conv-1")).toBeUndefined();
  });
});
