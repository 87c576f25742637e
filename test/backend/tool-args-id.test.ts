/**
 * Client tool calls whose `McpArgs.tool_call_id` is not their envelopes' `call_id` (`[[emu:tool-args-id]]`;
 * cursor-protocol-addendum-3 T5: MCP calls are keyed by the id inside `McpArgs`, which need not equal the envelope's),
 * end to end through the agent client on both transports (docs/protocol.md §4.6). The streamed argument pieces carry
 * the envelope's id and the `mcp_args` exec its own, so the agent client must still pair them: each call reaches the
 * caller once, under the id its pieces had, with pieces that add up to its arguments, and each result reaches the
 * call it answers. Streamed and held (whole) answers alike; two calls of the same tool or of different tools, in one
 * step (both started before either completes); and a call cut off while forming beside a complete one of the same
 * tool, whose `mcp_args` must not complete the cut call.
 */
import { describe, expect, it } from "vitest";
import type { BackendEvent, SegmentOptions } from "../../src/backend/types.js";
import {
  collect,
  collectUntilFailure,
  endOf,
  formingIds,
  queryTool,
  textOf,
  toolCallsOf,
  useFixture,
  userTurn,
} from "./harness.js";

const tools = [queryTool("lookup", "The lookup tool."), queryTool("weather", "The weather tool.")];
const call = (name: string, q: string) => `[[emu:tool ${name} {"q":"${q}"}]]`;

/**
 * Every call handed out came with pieces under its own id that add up to its arguments (each piece the whole text so
 * far, each one extending the one before), and no piece names an id that no call has.
 */
function expectWholeCalls(events: readonly BackendEvent[]): void {
  const calls = toolCallsOf(events);
  expect(formingIds(events)).toEqual(calls.map((c) => c.toolCallId));
  for (const c of calls) {
    const pieces = events.flatMap((e) =>
      e.type === "tool-call-delta" && e.toolCallId === c.toolCallId ? [e.argumentsText] : [],
    );
    expect(pieces.length, c.toolCallId).toBeGreaterThan(1);
    for (const [i, piece] of pieces.entries()) if (i > 0) expect(piece.startsWith(pieces[i - 1] ?? "")).toBe(true);
    expect(JSON.parse(pieces.at(-1) ?? "")).toEqual(JSON.parse(c.arguments));
  }
}

/** Answers each call with a result naming its own arguments, so the reply shows which result reached which call. */
function resultsFor(events: readonly BackendEvent[]) {
  return toolCallsOf(events).map((c) => ({
    toolCallId: c.toolCallId,
    content: `for ${(JSON.parse(c.arguments) as { q: string }).q}`,
    isError: false,
  }));
}

const cases = [
  { name: "one call", prompt: call("lookup", "alpha"), calls: [["lookup", "alpha"]] },
  {
    name: "two calls of the same tool",
    prompt: `${call("lookup", "alpha")} ${call("lookup", "bravo")}`,
    calls: [
      ["lookup", "alpha"],
      ["lookup", "bravo"],
    ],
  },
  {
    name: "two calls of different tools",
    prompt: `${call("lookup", "alpha")} ${call("weather", "bravo")}`,
    calls: [
      ["lookup", "alpha"],
      ["weather", "bravo"],
    ],
  },
] as const;

describe.each(["http2", "http1"] as const)("client tool calls with their own McpArgs id, over %s", (transport) => {
  const fx = useFixture({ transport });
  // The cut call is over only when the stall watchdog says so (unfinished-tool-call.test.ts).
  const stalling = useFixture({ transport, client: { stallTimeoutMs: 3_000 } });

  describe.each([
    ["streamed", {}],
    ["held", { holdEvents: true }],
  ] as const)("%s", (mode, options: SegmentOptions) => {
    describe.each(["[[emu:tool-args-id]]", "[[emu:tool-args-id 2]]"])("with %s", (directive) => {
      it.each(cases)(
        "$name reaches the caller as one complete call each, and each result its call",
        async (c) => {
          const id = `${transport}-${mode}-${directive.includes("2") ? "second" : "every"}-${c.name.replaceAll(" ", "-")}`;
          const turn = fx.client.startTurn(userTurn(id, `[[emu:tool-chunks 4]] ${c.prompt} ${directive}`, { tools }));
          const events = await collect(turn.stream(undefined, options));
          expect(toolCallsOf(events).map((e) => [e.toolName, JSON.parse(e.arguments).q])).toEqual(c.calls);
          expectWholeCalls(events);
          expect(endOf(events)).toBe("tool-calls");
          const reply = await collect(turn.resume(resultsFor(events), undefined, options));
          expect(textOf(reply)).toBe(c.calls.map(([name, q]) => `${name} returned: for ${q}`).join("\n"));
          expect(endOf(reply)).toBe("stop");
        },
        30_000,
      );
    });
  });

  describe.each(["[[emu:tool-args-id]]", "[[emu:tool-args-id 2]]"])(
    "a cut call beside a complete one, %s",
    (directive) => {
      const prompt = `[[emu:tool-chunks 4]] ${call("lookup", "alpha")} ${call("lookup", "bravo")} [[emu:tool-cut 1]] ${directive}`;
      const tag = directive.includes("2") ? "second" : "every";

      it("held: the answer is the complete call alone, under its own pieces, and it is answered", async () => {
        const turn = stalling.client.startTurn(userTurn(`${transport}-cut-held-${tag}`, prompt, { tools }));
        const events = await collect(turn.stream(undefined, { holdEvents: true }));
        expect(toolCallsOf(events).map((e) => JSON.parse(e.arguments))).toEqual([{ q: "bravo" }]);
        expectWholeCalls(events);
        expect(endOf(events)).toBe("tool-calls");
        const reply = await collect(turn.resume(resultsFor(events), undefined, { holdEvents: true }));
        expect(textOf(reply)).toBe("lookup returned: for bravo");
        expect(endOf(reply)).toBe("stop");
      }, 30_000);

      it("streamed: the complete call goes out under its own pieces before the turn fails as cut off", async () => {
        const turn = stalling.client.startTurn(userTurn(`${transport}-cut-streamed-${tag}`, prompt, { tools }));
        const { seen, failure } = await collectUntilFailure(turn.stream());
        expect(failure).toMatchObject({ detail: "upstream_truncated" });
        const calls = toolCallsOf(seen);
        expect(calls.map((e) => JSON.parse(e.arguments))).toEqual([{ q: "bravo" }]);
        const own = calls[0]?.toolCallId;
        const pieces = seen.flatMap((e) =>
          e.type === "tool-call-delta" && e.toolCallId === own ? [e.argumentsText] : [],
        );
        expect(JSON.parse(pieces.at(-1) ?? "null")).toEqual({ q: "bravo" });
      }, 30_000);
    },
  );
});
