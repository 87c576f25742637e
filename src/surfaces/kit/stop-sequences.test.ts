import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { capOutput, cutAnswer, cutAtStopSequences } from "./stop-sequences.js";

const text = (t: string): BackendEvent => ({ type: "text-delta", text: t });
const END: BackendEvent = { type: "turn-end", reason: "stop" };

/** `events` through `cut`, from a source that notes its release: what came out, and whether the source was released. */
async function through(
  events: BackendEvent[],
  cut: (source: AsyncIterable<BackendEvent>) => AsyncIterable<BackendEvent>,
): Promise<{ out: BackendEvent[]; released: boolean }> {
  let released = false;
  async function* source() {
    try {
      yield* events;
    } finally {
      released = true;
    }
  }
  const out: BackendEvent[] = [];
  for await (const event of cut(source())) out.push(event);
  return { out, released };
}

async function run(events: BackendEvent[], stops: string[]) {
  const seen: string[] = [];
  const { out, released } = await through(events, (source) => cutAtStopSequences(source, stops, (s) => seen.push(s)));
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

describe("capOutput", () => {
  const think = (t: string): BackendEvent => ({ type: "reasoning-delta", text: t });
  const call = (args: string): BackendEvent => ({ type: "tool-call", toolCallId: "c", toolName: "t", arguments: args });
  const forming: BackendEvent = { type: "tool-call-delta", toolCallId: "c", toolName: "t", argumentsText: '{"a' };
  const LENGTH: BackendEvent = { type: "turn-end", reason: "length" };

  async function capped(events: BackendEvent[], maxTokens: number, countsReasoning = true) {
    let capHit = 0;
    const { out, released } = await through(events, (source) =>
      capOutput(source, maxTokens, countsReasoning, () => (capHit += 1)),
    );
    return { out, capHit, released };
  }

  it("cuts the delta that passes the cap (4 characters a token), ends with length and releases the source", async () => {
    const result = await capped([text("abc"), text("defghij"), text("klm"), END], 2);
    expect(result.out).toEqual([text("abc"), text("defgh"), LENGTH]);
    expect(result.capHit).toBe(1);
    expect(result.released).toBe(true);
  });

  it("changes nothing when the answer fits, exactly or with room", async () => {
    const usage: BackendEvent = { type: "usage", usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } };
    const events = [text("abcd"), text("efgh"), END, usage];
    expect(await capped(events, 2)).toEqual({ out: events, capHit: 0, released: true });
    expect((await capped(events, 100)).out).toEqual(events);
  });

  it("counts reasoning the client asked for, and only that", async () => {
    const events = [think("abcdefghij"), text("xyz"), END];
    expect((await capped(events, 1, false)).out).toEqual([think("abcdefghij"), text("xyz"), END]);
    expect((await capped([...events.slice(0, 2), text("uvw"), END], 1, false)).out).toEqual([
      think("abcdefghij"),
      text("xyz"),
      text("u"),
      LENGTH,
    ]);
  });

  it("counts reasoning and never splits a surrogate pair", async () => {
    expect((await capped([think("abcdef"), text("xyz"), END], 2)).out).toEqual([think("abcdef"), text("xy"), LENGTH]);
    expect((await capped([think("abcdefghij"), END], 1)).out).toEqual([think("abcd"), LENGTH]);
    // The cap falls between the emoji's two code units: the emoji waits out.
    expect((await capped([text("abc😀d"), END], 1)).out).toEqual([text("abc"), LENGTH]);
  });

  it("streams a call that starts within the cap and sends it whole; one that would start past it ends the answer", async () => {
    // Within the cap: its arguments stream as they form (the delta comes out before the call completes) and the call
    // goes out whole though it passes the cap (2 + 7 > 8 characters); the answer then ends at its next output.
    const events = [text("ab"), forming, call('{"a":1}'), text("more"), END];
    expect((await capped(events, 2)).out).toEqual([text("ab"), forming, call('{"a":1}'), LENGTH]);
    const order: string[] = [];
    async function* source(): AsyncGenerator<BackendEvent> {
      for (const event of [text("ab"), forming, call('{"a":1}'), END]) {
        order.push(`in:${event.type}`);
        yield event;
      }
    }
    for await (const event of capOutput(source(), 2, true, () => {})) order.push(`out:${event.type}`);
    expect(order.slice(0, 4)).toEqual(["in:text-delta", "out:text-delta", "in:tool-call-delta", "out:tool-call-delta"]);
    // The cap is reached before the call starts: nothing of it goes out, streamed or whole.
    expect((await capped([text("abcdefgh"), forming, call('{"a":1}'), END], 2)).out).toEqual([
      text("abcdefgh"),
      LENGTH,
    ]);
    expect((await capped([text("abcdefgh"), call('{"a":1}'), END], 2)).out).toEqual([text("abcdefgh"), LENGTH]);
  });

  it("never ends the answer while a call that started within the cap is forming", async () => {
    const other: BackendEvent = { type: "tool-call-delta", toolCallId: "d", toolName: "t", argumentsText: "{" };
    const events = [forming, text("a long text beside the call"), other, call('{"a":1}'), text("more"), END];
    // The text and the second call's start pass the cap while "c" forms: they go out, and the answer ends after.
    expect((await capped(events, 1)).out).toEqual([
      forming,
      text("a long text beside the call"),
      other,
      call('{"a":1}'),
      text("more"),
      END,
    ]);
  });

  it("sends the answer's end before the source has finished closing", async () => {
    let closing!: () => void;
    const closed = new Promise<void>((resolve) => (closing = resolve));
    const inner = (async function* (): AsyncGenerator<BackendEvent> {
      yield text("abcdefgh");
    })();
    const source: AsyncIterable<BackendEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: () => inner.next(),
        return: async () => {
          await closed;
          return { done: true, value: undefined };
        },
      }),
    };
    const out: BackendEvent[] = [];
    for await (const event of capOutput(source, 1, true, () => {})) out.push(event);
    expect(out).toEqual([text("abcd"), LENGTH]);
    closing();
  });

  it("a reader that leaves releases the source at once, even while a read is pending", async () => {
    let released = false;
    let started!: () => void;
    const reading = new Promise<void>((resolve) => (started = resolve));
    async function* hanging(): AsyncGenerator<BackendEvent> {
      yield text("a");
      started();
      await new Promise(() => {});
    }
    const inner = hanging();
    const source: AsyncIterable<BackendEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: () => inner.next(),
        return: async () => {
          released = true;
          return { done: true, value: undefined };
        },
      }),
    };
    const events = cutAnswer(source, { stopSequences: ["zz"], maxOutputTokens: 10 }, { onStop() {}, onLength() {} });
    const reader = events[Symbol.asyncIterator]();
    void reader.next();
    await reading;
    // An async generator would queue this return behind the pending read, and the source would never hear of it.
    await reader.return?.();
    expect(released).toBe(true);
  });
});

describe("cutAnswer: the usage of a cut answer", () => {
  const cutWith = (events: BackendEvent[], limits: Parameters<typeof cutAnswer>[1]) =>
    through(events, (source) => cutAnswer(source, limits, { onStop() {}, onLength() {} }));
  const inputTokens = () => 123;

  it("follows the cap's turn-end: the input by the request's estimate, the output handed out at 4 characters a token", async () => {
    const thought: BackendEvent = { type: "reasoning-delta", text: "hmm " };
    const { out } = await cutWith([thought, text("alpha "), text("bravo "), text("charlie"), END], {
      maxOutputTokens: 3,
      inputTokens,
    });
    // Hidden reasoning is not capped but was handed out: 4 + 12 characters, 4 tokens, one of them reasoning.
    expect(out.map((e) => e.type)).toEqual(["reasoning-delta", "text-delta", "text-delta", "turn-end", "usage"]);
    expect(out.at(-1)).toEqual({
      type: "usage",
      usage: {
        inputTokens: 123,
        outputTokens: 4,
        totalTokens: 127,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 1,
        source: "estimate",
      },
    });
  });

  it("follows a stop sequence's turn-end, counting only what went out before it", async () => {
    const { out } = await cutWith([text("one two"), text(" STOP three"), END], {
      stopSequences: ["STOP"],
      inputTokens,
    });
    expect(out.at(-2)).toEqual({ type: "turn-end", reason: "stop" });
    // "one two " is 8 characters: 2 tokens.
    expect(out.at(-1)).toMatchObject({ type: "usage", usage: { inputTokens: 123, outputTokens: 2, totalTokens: 125 } });
  });

  it("is not added to an answer that ends on its own (Cursor's usage follows it), nor to a cut with nothing handed out", async () => {
    const cursorUsage: BackendEvent = {
      type: "usage",
      usage: { inputTokens: 50, outputTokens: 2, totalTokens: 52, source: "cursor" },
    };
    const whole = await cutWith([text("short"), END, cursorUsage], { maxOutputTokens: 100, inputTokens });
    expect(whole.out).toEqual([text("short"), END, cursorUsage]);
    const empty = await cutWith([text("STOP now"), END], { stopSequences: ["STOP"], inputTokens });
    expect(empty.out).toEqual([{ type: "turn-end", reason: "stop" }]);
  });

  it("runs the stop sequences before the cap as one filter: the cap counts what the sequences let out", async () => {
    const { out } = await cutWith([text("abcdefgh"), text("ijklmnop"), END], {
      stopSequences: ["zz"],
      maxOutputTokens: 3,
      inputTokens,
    });
    const texts = out.flatMap((e) => (e.type === "text-delta" ? [e.text] : []));
    expect(texts.join("")).toBe("abcdefghijkl");
    expect(out.slice(-2).map((e) => e.type)).toEqual(["turn-end", "usage"]);
  });
});
