/**
 * The emulator's turn channel keeps one abort listener for all pending KV waits: a listener per `get_blob_args` made
 * every new wait scan all earlier ones (Node's EventTarget checks for duplicates), quadratic in a long history.
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../util/logger.js";
import { type InboundMessage, TurnChannel } from "./turn-channel.js";

function idleInbound(): AsyncIterable<InboundMessage> {
  return { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<InboundMessage>>(() => {}) }) };
}

describe("TurnChannel KV waits", () => {
  it("thousands of pending blob requests share one abort listener, and all fail when the turn aborts", async () => {
    const channel = new TurnChannel({
      inbound: idleInbound(),
      clientSignal: new AbortController().signal,
      heartbeatIntervalMs: 60_000,
      firstMessageTimeoutMs: 60_000,
      logger: silentLogger,
      onInboundBytes: () => {},
    });
    const before = getEventListeners(channel.signal, "abort").length;
    const waits = Array.from({ length: 5_000 }, (_, i) => channel.getBlob(new Uint8Array([i % 256])));
    expect(getEventListeners(channel.signal, "abort").length).toBe(before);
    channel.dispose();
    const outcomes = await Promise.allSettled(waits);
    expect(outcomes.every((o) => o.status === "rejected")).toBe(true);
    // A wait started after the turn ended fails at once instead of hanging.
    await expect(channel.getBlob(new Uint8Array([1]))).rejects.toBeDefined();
  });
});
