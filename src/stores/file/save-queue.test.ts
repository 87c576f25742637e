import { describe, expect, it } from "vitest";
import { sampleRecord } from "../../../test/support/conversation-record.js";
import type { ConversationRecord } from "../types.js";
import { SaveQueue } from "./save-queue.js";

/** A write that records what it was given and finishes only when released. */
function gatedWrites() {
  const written: string[] = [];
  const gates: Array<{ release: () => void; fail: (error: Error) => void }> = [];
  const write = (name: string, record: ConversationRecord) => {
    written.push(`${name}:${record.coveredMessages}`);
    return new Promise<void>((resolve, reject) => gates.push({ release: resolve, fail: reject }));
  };
  return { written, gates, write };
}

const record = (covered: number): ConversationRecord => ({ ...sampleRecord("c", 1_000), coveredMessages: covered });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("save queue", () => {
  it("coalesces the saves that wait behind a running write into one write of the newest record", async () => {
    const { written, gates, write } = gatedWrites();
    const queue = new SaveQueue(write);
    const first = queue.enqueue("a", record(1));
    // Queued in the same tick: replaces the record the slot will write.
    const second = queue.enqueue("a", record(2));
    expect(second).toBe(first);
    await settle();
    expect(written).toEqual(["a:2"]);
    expect(queue.queued.has("a")).toBe(false);
    // Behind the running write: three saves, one slot, one write of the last.
    const waiting = [queue.enqueue("a", record(3)), queue.enqueue("a", record(4)), queue.enqueue("a", record(5))];
    expect(queue.queued.get("a")?.record.coveredMessages).toBe(5);
    await settle();
    expect(written).toEqual(["a:2"]);
    gates[0]?.release();
    await first;
    await settle();
    expect(written).toEqual(["a:2", "a:5"]);
    gates[1]?.release();
    await Promise.all(waiting);
    expect(queue.queued.size).toBe(0);
  });

  it("keeps conversations apart, and a failed write fails its own saves only", async () => {
    const { written, gates, write } = gatedWrites();
    const queue = new SaveQueue(write);
    const failing = queue.enqueue("a", record(1));
    const other = queue.enqueue("b", record(1));
    await settle();
    expect(written).toEqual(["a:1", "b:1"]);
    const next = queue.enqueue("a", record(2));
    gates[0]?.fail(new Error("disk full"));
    await expect(failing).rejects.toThrow("disk full");
    await settle();
    expect(written).toEqual(["a:1", "b:1", "a:2"]);
    gates[1]?.release();
    gates[2]?.release();
    await expect(Promise.all([other, next])).resolves.toEqual([undefined, undefined]);
  });
});
