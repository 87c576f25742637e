import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../backend/types.js";
import { TurnRecording } from "./recording.js";

const text = (t: string): BackendEvent => ({ type: "text-delta", text: t });

describe("a resumed turn's recording", () => {
  it("keeps the turn running while a replay reads it, and cancels it once nobody does", async () => {
    const owner = new AbortController();
    const recording = new TurnRecording("key", owner.signal);
    recording.push(text("a"));
    const replay = recording.read()[Symbol.asyncIterator]();
    expect((await replay.next()).value).toEqual(text("a"));
    owner.abort();
    expect(recording.runSignal.aborted).toBe(false);
    expect(recording.ownerLeft()).toBe(true);
    recording.push(text("b"));
    expect((await replay.next()).value).toEqual(text("b"));
    await replay.return?.(undefined);
    expect(recording.runSignal.aborted).toBe(true);
  });

  it("cancels the turn when its owner leaves with no replay reading, never after the turn ended", () => {
    const alone = new TurnRecording("key", new AbortController().signal);
    expect(alone.ownerLeft()).toBe(false);
    expect(alone.runSignal.aborted).toBe(true);
    const done = new TurnRecording("key");
    done.finish();
    done.ownerLeft();
    expect(done.runSignal.aborted).toBe(false);
  });
});
