import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { TurnChannel } from "./turn-channel.js";

const later = (ms: number) => performance.now() + ms;

describe("TurnChannel.nextBefore", () => {
  it("returns queued items in order, even when the deadline has passed", async () => {
    const channel = new TurnChannel();
    channel.push({ type: "turn-ended" });
    channel.push({ type: "end" });
    expect(await channel.nextBefore(0)).toEqual({ type: "turn-ended" });
    expect(await channel.nextBefore(0)).toEqual({ type: "end" });
    expect(await channel.nextBefore(0)).toBe("timeout");
  });

  it("waits for an item pushed before the deadline, and times out when none comes", async () => {
    const channel = new TurnChannel();
    const pending = channel.nextBefore(later(60_000));
    setTimeout(() => channel.push({ type: "end" }), 1);
    expect(await pending).toEqual({ type: "end" });
    expect(await channel.nextBefore(later(5))).toBe("timeout");
  });

  it("delivers queued items before the failure, then the failure", async () => {
    const channel = new TurnChannel();
    channel.push({ type: "pause" });
    channel.fail(new ProxyError("backend_protocol", "broken"));
    expect(await channel.nextBefore(later(60_000))).toEqual({ type: "pause" });
    await expect(channel.nextBefore(later(60_000))).rejects.toThrow("broken");
  });

  it("rejects with the signal's reason when the caller aborts while waiting", async () => {
    const channel = new TurnChannel();
    const controller = new AbortController();
    const pending = channel.nextBefore(later(60_000), controller.signal);
    controller.abort(new ProxyError("canceled", "gone"));
    await expect(pending).rejects.toThrow("gone");
    // The channel still works for the next waiter after an abandoned wait.
    channel.push({ type: "end" });
    expect(await channel.nextBefore(later(60_000))).toEqual({ type: "end" });
  });
});

describe("TurnChannel waits and signals", () => {
  it("listens to the caller's signal once across waits, ignores a replaced signal, and drops it on release", async () => {
    const channel = new TurnChannel();
    const first = new AbortController();
    for (let i = 0; i < 3; i++) {
      const pending = channel.next(first.signal);
      channel.push({ type: "pause" });
      expect(await pending).toEqual({ type: "pause" });
    }
    expect(getEventListeners(first.signal, "abort")).toHaveLength(1);
    // A wait under another signal moves the listener; the old signal aborting no longer ends the wait.
    const second = new AbortController();
    const pending = channel.next(second.signal);
    expect(getEventListeners(first.signal, "abort")).toHaveLength(0);
    first.abort(new ProxyError("canceled", "old request"));
    channel.push({ type: "end" });
    expect(await pending).toEqual({ type: "end" });
    channel.release();
    expect(getEventListeners(second.signal, "abort")).toHaveLength(0);
  });

  it("poll takes queued items without waiting and leaves a failure to next()", async () => {
    const channel = new TurnChannel();
    channel.push({ type: "pause" });
    channel.fail(new ProxyError("backend_protocol", "broken"));
    expect(channel.poll()).toEqual({ type: "pause" });
    expect(channel.poll()).toBeUndefined();
    await expect(channel.next()).rejects.toThrow("broken");
  });
});
