/**
 * The kit's translation drivers own the rules every door shares: releasing the engine's stream, "the turn never
 * ended", the failure path, and tool arguments streamed as the suffix of Cursor's cumulative snapshots.
 */
import { describe, expect, it, vi } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { type DoorEvent, driveTurn, foldTurn, streamTurn, type Translation } from "./translate.js";

async function* from(events: BackendEvent[]): AsyncGenerator<BackendEvent> {
  yield* events;
}

/** A translation that records what the door's handlers receive, one frame per event. */
function recorder(): Translation<string, DoorEvent[]> & { result(): DoorEvent[] } {
  const seen: DoorEvent[] = [];
  const record = (event: DoorEvent, emit: (frame: string) => void) => {
    seen.push(event);
    emit(event.type);
  };
  return {
    start: (emit) => emit("start"),
    on: {
      "text-delta": record,
      "tool-call-delta": record,
      "tool-call": (event, emit) => {
        if (event.toolName === "bad") throw new ProxyError("backend_protocol", "bad arguments");
        record(event, emit);
      },
      "turn-end": record,
      usage: record,
    },
    finish: (emit) => emit("finish"),
    fail: (error, _context, emit) => emit(`fail:${ProxyError.from(error).code}`),
    result: () => seen,
  };
}

function tracked(events: BackendEvent[]) {
  const state = { released: false, started: false };
  const source: AsyncIterable<BackendEvent> = {
    [Symbol.asyncIterator]: () => {
      let i = 0;
      return {
        next: async () => {
          state.started = true;
          const value = events[i++];
          return value === undefined ? { done: true, value: undefined } : { done: false, value };
        },
        return: async () => {
          state.released = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { state, source };
}

const partial = (toolCallId: string, argumentsText: string): BackendEvent => ({
  type: "tool-call-delta",
  toolCallId,
  toolName: "write",
  argumentsText,
});
const done = (toolCallId: string, args: string): BackendEvent => ({
  type: "tool-call",
  toolCallId,
  toolName: "write",
  arguments: args,
});
const end: BackendEvent = { type: "turn-end", reason: "tool-calls" };

describe("releasing the engine's stream", () => {
  it("releases it when the client leaves before the first event was pulled", async () => {
    const { state, source } = tracked([{ type: "text-delta", text: "x" }]);
    const body = streamTurn(source, recorder(), { encode: (f) => `${f}\n`, end: "" });
    await body.cancel("gone");
    expect(state).toEqual({ released: true, started: false });
  });

  it("releases it when the client leaves mid-stream", async () => {
    const { state, source } = tracked([
      { type: "text-delta", text: "x" },
      { type: "text-delta", text: "y" },
    ]);
    const reader = streamTurn(source, recorder(), { encode: (f) => `${f}\n`, end: "" }).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(state).toEqual({ released: true, started: true });
  });

  it("releases it when a handler fails, and the failure becomes the door's fail frames", async () => {
    const { state, source } = tracked([done("c", "{}"), end]);
    const onError = vi.fn();
    const failing = recorder();
    const bad: BackendEvent = { type: "tool-call", toolCallId: "c", toolName: "bad", arguments: "{}" };
    const { state: badState, source: badSource } = tracked([bad, end]);
    const text = await new Response(
      streamTurn(badSource, failing, { encode: (f) => `${f}\n`, end: "END\n" }, { callbacks: { onError } }),
    ).text();
    expect(text).toBe("start\nfail:backend_protocol\n");
    expect(badState.released).toBe(true);
    expect(onError).toHaveBeenCalledTimes(1);
    // A source that finished on its own is not asked to return.
    await foldTurn(source, recorder());
    expect(state.released).toBe(false);
  });
});

describe("the turn that never ended", () => {
  it("is a backend_protocol error, naming an open tool call", async () => {
    await expect(foldTurn(from([{ type: "text-delta", text: "x" }]), recorder())).rejects.toMatchObject({
      code: "backend_protocol",
      message: expect.not.stringContaining("tool call"),
    });
    await expect(foldTurn(from([partial("a", '{"p"')]), recorder())).rejects.toMatchObject({
      code: "backend_protocol",
      detail: "upstream_truncated",
      message: expect.stringContaining("while a tool call was open"),
    });
  });

  it("streams the door's fail frames and no end marker", async () => {
    const text = await new Response(
      streamTurn(from([{ type: "text-delta", text: "x" }]), recorder(), { encode: (f) => `${f}\n`, end: "END\n" }),
    ).text();
    expect(text).toBe("start\ntext-delta\nfail:backend_protocol\n");
  });

  it("passes only usage and checkpoints after the turn-end", async () => {
    const seen = await foldTurn(
      from([
        end,
        { type: "text-delta", text: "late" },
        { type: "usage", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      ]),
      recorder(),
    );
    expect(seen.map((event) => event.type)).toEqual(["turn-end", "usage"]);
  });
});

describe("tool arguments as they form", () => {
  it("hands out the suffix each cumulative snapshot adds, then the rest at completion", async () => {
    const seen = await foldTurn(
      from([
        partial("a", ""),
        partial("a", '{"p'),
        partial("a", '{"p'),
        partial("a", '{"path":"x'),
        done("a", '{"path":"x"}'),
        end,
      ]),
      recorder(),
    );
    expect(seen.slice(0, -1)).toEqual([
      { type: "tool-call-delta", toolCallId: "a", toolName: "write", first: true, delta: "" },
      { type: "tool-call-delta", toolCallId: "a", toolName: "write", first: false, delta: '{"p' },
      { type: "tool-call-delta", toolCallId: "a", toolName: "write", first: false, delta: 'ath":"x' },
      { ...done("a", '{"path":"x"}'), streamed: true, rest: '"}' },
    ]);
  });

  it("stops streaming a call whose snapshot does not extend what was sent; the completion carries the rest", async () => {
    const seen = await foldTurn(
      from([
        partial("a", '{"a":1'),
        partial("a", '{"b"'),
        partial("a", '{"a":1,"b":2'),
        done("a", '{"a":1,"b":2}'),
        end,
      ]),
      recorder(),
    );
    expect(
      seen.map((event) =>
        event.type === "tool-call-delta" ? event.delta : event.type === "tool-call" ? event.rest : "",
      ),
    ).toEqual(['{"a":1', ',"b":2}', ""]);
  });

  it("lets the streamed text stand for structured arguments of the same value, and flags a real mismatch", async () => {
    const same = await foldTurn(
      from([partial("a", '{ "b": 2, "a": 1'), partial("a", '{ "b": 2, "a": 1 }'), done("a", '{"a":1,"b":2}'), end]),
      recorder(),
    );
    expect(same[2]).toMatchObject({ arguments: '{ "b": 2, "a": 1 }', rest: "" });
    const other = await foldTurn(from([partial("a", '{ "a": 1'), done("a", '{"a":2}'), end]), recorder());
    expect(other[1]).toMatchObject({ arguments: '{"a":2}', rest: undefined });
  });

  it("keeps interleaved calls apart by id; a call that never streamed gets all its arguments, {} for none", async () => {
    const seen = await foldTurn(
      from([
        partial("a", '{"x'),
        partial("b", '{"y'),
        partial("a", '{"x":1'),
        done("b", '{"y":2}'),
        done("a", '{"x":1}'),
        done("c", ""),
        end,
      ]),
      recorder(),
    );
    const rests = seen.flatMap((event) =>
      event.type === "tool-call"
        ? [[event.toolCallId, event.streamed, event.rest]]
        : event.type === "tool-call-delta"
          ? [[event.toolCallId, event.first, event.delta]]
          : [],
    );
    expect(rests).toEqual([
      ["a", true, '{"x'],
      ["b", true, '{"y'],
      ["a", false, '":1'],
      ["b", true, '":2}'],
      ["a", true, "}"],
      ["c", false, "{}"],
    ]);
  });
});

describe("driveTurn", () => {
  it("waits for each frame's sink and releases the source when the sink fails", async () => {
    const { state, source } = tracked([
      { type: "text-delta", text: "x" },
      { type: "text-delta", text: "y" },
    ]);
    const frames: string[] = [];
    const sink = async (frame: string) => {
      frames.push(frame);
      if (frame === "text-delta") throw new Error("editor gone");
    };
    await expect(driveTurn(source, recorder(), sink)).rejects.toThrow("editor gone");
    expect(frames).toEqual(["start", "text-delta"]);
    expect(state.released).toBe(true);
  });
});

describe("an estimated usage without an input figure", () => {
  const usage = (inputTokens: number, source: "cursor" | "estimate"): BackendEvent => ({
    type: "usage",
    usage: { inputTokens, outputTokens: 2, totalTokens: inputTokens + 2, source },
  });
  const END: BackendEvent = { type: "turn-end", reason: "tool-calls" };

  it("reports the request's input estimate, to the door and the watch alike, asked once", async () => {
    const watched: BackendEvent[] = [];
    const inputTokens = vi.fn(() => 40);
    const seen = await foldTurn(from([END, usage(0, "estimate")]), recorder(), {
      watch: (event) => watched.push(event),
      inputTokens,
    });
    const estimated = { inputTokens: 40, outputTokens: 2, totalTokens: 42, source: "estimate" };
    expect(seen.at(-1)).toEqual({ type: "usage", usage: estimated });
    expect(watched.at(-1)).toEqual({ type: "usage", usage: estimated });
    expect(inputTokens).toHaveBeenCalledTimes(1);
  });

  it("leaves Cursor's counts and an estimate with an input figure as they are", async () => {
    const inputTokens = vi.fn(() => 40);
    const events = [END, usage(0, "cursor"), usage(7, "estimate")];
    const seen = await foldTurn(from(events), recorder(), { inputTokens });
    expect(seen.slice(1)).toEqual(events.slice(1));
    expect(inputTokens).not.toHaveBeenCalled();
  });
});
