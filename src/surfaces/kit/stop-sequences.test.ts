import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { cutAtStopSequences } from "./stop-sequences.js";

const text = (t: string): BackendEvent => ({ type: "text-delta", text: t });
const END: BackendEvent = { type: "turn-end", reason: "stop" };

async function run(events: BackendEvent[], stops: string[]) {
  let released = false;
  async function* source() {
    try {
      yield* events;
    } finally {
      released = true;
    }
  }
  const seen: string[] = [];
  const out: BackendEvent[] = [];
  for await (const event of cutAtStopSequences(source(), stops, (s) => seen.push(s))) out.push(event);
  const texts = out.filter((e) => e.type === "text-delta").map((e) => (e.type === "text-delta" ? e.text : ""));
  return { out, text: texts.join(""), seen, released };
}

describe("cutAtStopSequences", () => {
  it("passes everything through without sequences (empty ones ignored)", async () => {
    const events = [text("a"), text("b"), END];
    expect((await run(events, [])).out).toEqual(events);
    expect((await run(events, [""])).out).toEqual(events);
  });

  it("finds a sequence split across deltas, ends the turn there and releases the source", async () => {
    const result = await run([text("one tw"), text("o thr"), text("ee"), END], ["two three"]);
    expect(result.text).toBe("one ");
    expect(result.out.at(-1)).toEqual(END);
    expect(result.seen).toEqual(["two three"]);
    expect(result.released).toBe(true);
  });

  it("takes more sequences than a call's arguments can hold (a large body's list is no crash)", async () => {
    // Math.max(...lengths) threw RangeError past some 120k sequences: a failed answer, its upstream turn not released.
    const many = Array.from({ length: 200_000 }, (_, i) => `zz${i}`);
    const result = await run([text("one zz199999 two"), END], many);
    expect(result.text).toBe("one ");
    expect(result.seen).toEqual(["zz199999"]);
    expect(result.released).toBe(true);
  });

  it("picks the earliest sequence, the longest of those starting there", async () => {
    expect((await run([text("abcdef"), END], ["de", "bc", "bcd"])).seen).toEqual(["bcd"]);
  });

  it("flushes held text before other events and at the end, never splitting a surrogate pair", async () => {
    const call: BackendEvent = { type: "tool-call", toolCallId: "c", toolName: "t", arguments: "{}" };
    // One character held (a sequence of two): the emoji's two code units stay together.
    const result = await run([text("ab😀"), call, text("xy"), END], ["zz"]);
    expect(result.out).toEqual([text("ab"), text("😀"), call, text("x"), text("y"), END]);
    const texts = result.out.flatMap((e) => (e.type === "text-delta" ? [e.text] : []));
    // No piece starts with a low surrogate or ends with a high one.
    for (const piece of texts) expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(piece)).toBe(false);
    expect((await run([text("tail")], ["zz"])).text).toBe("tail");
  });
});
