/**
 * `tool_requests_listed.call_count` (cursor-protocol-addendum-2.md §4) end to end: the emulator announces each step's
 * parallel calls, and the agent client ends the segment as soon as the last announced call arrived, running no batch
 * window while announced calls are still to come. Without the announcement (`toolCallCount: false`) the window still
 * ends the segment. Where the window here is far longer than the test's timeout, a segment that waited it out could
 * not pass. A count the calls never reach ends once Cursor made no progress for the idle period (`listedCallsIdleMs`),
 * not at the stall timeout, which here is far longer than the test's timeout; gaps below that period keep the step's
 * calls together. A caller that takes one call per answer gets the step's calls one segment at a time.
 */
import { describe, expect, it } from "vitest";
import { collect, endOf, queryTool, toolCallsOf, useFixture, userTurn } from "./harness.js";

const lookupTool = queryTool();
const PARALLEL = '[[emu:tool lookup {"q":"a"}]] [[emu:tool lookup {"q":"b"}]] [[emu:tool lookup {"q":"c"}]]';

describe.each(["http2", "http1"] as const)("tool call count over %s", (transport) => {
  describe("with the count (the emulator's default)", () => {
    const fx = useFixture({ transport, client: { toolBatchWindowMs: 120_000 } });

    it("parks on all three parallel calls without waiting out the batch window", async () => {
      const turn = fx.client.startTurn(userTurn(`${transport}-count`, PARALLEL, { tools: [lookupTool] }));
      const events = await collect(turn.stream());
      expect(toolCallsOf(events).map((c) => JSON.parse(c.arguments))).toEqual([{ q: "a" }, { q: "b" }, { q: "c" }]);
      expect(endOf(events)).toBe("tool-calls");
      expect(turn.status).toBe("parked");
      await turn.close();
    }, 10_000);
  });

  describe("with the count and the default batch window", () => {
    const fx = useFixture({ transport });

    it("keeps a step's calls together however far apart they come: no window runs while listed calls are to come", async () => {
      // 300 ms between calls, far past the 40 ms window.
      const turn = fx.client.startTurn(
        userTurn(`${transport}-gap`, `[[emu:tool-gap 300]] ${PARALLEL}`, { tools: [lookupTool] }),
      );
      const events = await collect(turn.stream());
      expect(toolCallsOf(events).map((c) => JSON.parse(c.arguments))).toEqual([{ q: "a" }, { q: "b" }, { q: "c" }]);
      expect(endOf(events)).toBe("tool-calls");
      await turn.close();
    }, 10_000);
  });

  describe("with a count the calls never reach, and a stall timeout far longer than the test", () => {
    const fx = useFixture({ transport, client: { stallTimeoutMs: 600_000 } });

    it("hands out the calls that came once Cursor made no progress for the idle period, and the turn goes on", async () => {
      // Four listed, three sent; the emulator's heartbeats (every 50 ms) are not progress. The default idle period.
      const turn = fx.client.startTurn(
        userTurn(`${transport}-short`, `[[emu:tool-count 4]] ${PARALLEL}`, { tools: [lookupTool] }),
      );
      const events = await collect(turn.stream());
      expect(toolCallsOf(events).map((c) => JSON.parse(c.arguments))).toEqual([{ q: "a" }, { q: "b" }, { q: "c" }]);
      expect(endOf(events)).toBe("tool-calls");
      const results = toolCallsOf(events).map((c, i) => ({
        toolCallId: c.toolCallId,
        content: `r${i}`,
        isError: false,
      }));
      const second = await collect(turn.resume(results));
      expect(endOf(second)).toBe("stop");
    }, 15_000);
  });

  describe("with the count and a short idle period", () => {
    const fx = useFixture({ transport, client: { stallTimeoutMs: 600_000, listedCallsIdleMs: 1500 } });

    it("keeps calls together whose gaps are below the idle period though they span more than it", async () => {
      // 600 ms of silence before each later call, far past the 40 ms window and within the 1.5 s idle period; the
      // four calls span 1.8 s, so an idle period counted from anything but the latest progress would split them.
      const FOUR = `${PARALLEL} [[emu:tool lookup {"q":"d"}]]`;
      const turn = fx.client.startTurn(
        userTurn(`${transport}-spread`, `[[emu:tool-gap 600]] ${FOUR}`, { tools: [lookupTool] }),
      );
      const events = await collect(turn.stream());
      expect(toolCallsOf(events).map((c) => JSON.parse(c.arguments))).toEqual([
        { q: "a" },
        { q: "b" },
        { q: "c" },
        { q: "d" },
      ]);
      expect(endOf(events)).toBe("tool-calls");
      await turn.close();
    }, 15_000);
  });

  describe("without the count (--no-tool-call-count)", () => {
    const fx = useFixture({ transport, emulator: { toolCallCount: false } });

    it("still parks on all three parallel calls once the batch window passes", async () => {
      const turn = fx.client.startTurn(userTurn(`${transport}-window`, PARALLEL, { tools: [lookupTool] }));
      const events = await collect(turn.stream());
      expect(toolCallsOf(events)).toHaveLength(3);
      expect(endOf(events)).toBe("tool-calls");
      const results = toolCallsOf(events).map((c, i) => ({
        toolCallId: c.toolCallId,
        content: `r${i}`,
        isError: false,
      }));
      const second = await collect(turn.resume(results));
      expect(endOf(second)).toBe("stop");
    });
  });
});

describe("one tool call per segment (SegmentOptions.oneToolCall)", () => {
  // No count, and a window far longer than the test: only the one-call rule can end these segments.
  const fx = useFixture({
    transport: "http2",
    emulator: { toolCallCount: false },
    client: { toolBatchWindowMs: 120_000 },
  });

  it("ends each segment at its call, the step's calls following one per segment, and the turn completes", async () => {
    const turn = fx.client.startTurn(userTurn("one-call", PARALLEL, { tools: [lookupTool] }));
    const options = { oneToolCall: true };
    let events = await collect(turn.stream(undefined, options));
    const seen: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      const calls = toolCallsOf(events);
      expect(calls).toHaveLength(1);
      expect(endOf(events)).toBe("tool-calls");
      const call = calls[0]!;
      seen.push(JSON.parse(call.arguments));
      events = await collect(
        turn.resume([{ toolCallId: call.toolCallId, content: `r${round}`, isError: false }], undefined, options),
      );
    }
    expect(seen).toEqual([{ q: "a" }, { q: "b" }, { q: "c" }]);
    expect(toolCallsOf(events)).toEqual([]);
    expect(endOf(events)).toBe("stop");
  }, 20_000);
});
