/**
 * The file conversation store across real processes: two processes save into one directory at once and are killed
 * with SIGKILL; every save whose promise had resolved is found afterwards, a torn last entry harms nothing, and their
 * segments (owners gone) are compacted away by the next process's sweep once nothing in them is live.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { sampleRecord } from "../../../test/support/conversation-record.js";
import { createFileConversationStore } from "./conversation-store.js";

const CHILD = fileURLToPath(new URL("../../../test/support/conversation-store-child.ts", import.meta.url));
const children: ChildProcess[] = [];
let root: string | undefined;
afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

/** Starts a saving child; `saved()` is the highest number it reported saved so far. */
function saver(dir: string, name: string) {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, dir, name], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let saved = -1;
  let stderr = "";
  let buffered = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("saved ")) saved = Number(line.slice(6));
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, saved: () => saved, stderr: () => stderr, exited };
}

async function waitFor(check: () => boolean, what: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("file conversation store: processes killed with SIGKILL", () => {
  it("keeps every save that resolved, in two processes appending at once", { timeout: 120_000 }, async () => {
    root = await mkdtemp(join(tmpdir(), "cb-log-kill-"));
    const dir = join(root, "conversations");
    const savers = [saver(dir, "one"), saver(dir, "two")];
    await waitFor(
      () => savers.every((s) => s.saved() >= 40),
      () => savers.map((s) => `${s.saved()} ${s.stderr()}`).join(" | "),
    );
    for (const s of savers) s.child.kill("SIGKILL");
    await Promise.all(savers.map((s) => s.exited));
    const reported = savers.map((s) => s.saved());

    const store = createFileConversationStore({ dir, cacheBytes: 0 });
    for (const [index, name] of ["one", "two"].entries()) {
      for (let i = 0; i <= (reported[index] ?? -1); i++) {
        const loaded = await store.load(`${name}-${i}`);
        expect(loaded?.coveredMessages, `${name}-${i}`).toBe(i);
      }
    }
    const childSegments = (await readdir(dir)).filter((name) => name.endsWith(".log"));
    expect(childSegments).toHaveLength(2);

    // Everything they saved superseded here: their segments (owners gone, nothing live) go at the next sweep.
    for (const [index, name] of ["one", "two"].entries()) {
      for (let i = 0; i <= (reported[index] ?? -1); i++) {
        await store.save({ ...sampleRecord(`${name}-${i}`, Date.now(), "again"), coveredMessages: 1000 + i });
      }
    }
    await store.deleteExpired();
    const left = (await readdir(dir)).filter((name) => name.endsWith(".log"));
    for (const segment of childSegments) expect(left).not.toContain(segment);
    const fresh = createFileConversationStore({ dir, cacheBytes: 0 });
    expect((await fresh.load("one-0"))?.coveredMessages).toBe(1000);
    expect((await fresh.load(`two-${reported[1]}`))?.coveredMessages).toBe(1000 + (reported[1] ?? 0));
  });
});
