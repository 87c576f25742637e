/**
 * A client tool call whose arguments Cursor starts streaming and never completes (`[[emu:tool-cut N]]`: no
 * `tool_call_started`, `mcp_args` or completion follows its first half), end to end through the agent client
 * (docs/protocol.md §4.6). The complete calls are handed out; the unfinished one never is, and a whole (held) answer
 * leaves its pieces out. When the unfinished call is the only one, the turn's end shows it is over: the stall timeout
 * is ten minutes there, so a segment that waited for it could only end by the test's own timeout, and fail. When a
 * complete call follows it, nothing in the stream says it is over (a later call's `mcp_args` does not: calls can
 * interleave), so the stall watchdog ends the wait, and hands out the complete call instead of failing the turn:
 * those cases run with a stall timeout of 3 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendEvent, ClientTool } from "../../src/backend/types.js";
import { collect, endOf, type Fixture, startFixture, textOf, toolCallsOf, userTurn } from "./harness.js";

const lookupTool: ClientTool = {
  name: "lookup",
  description: "Looks something up.",
  inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
};
const TWO_CALLS = '[[emu:tool-chunks 4]] [[emu:tool lookup {"q":"alpha"}]] [[emu:tool lookup {"q":"bravo"}]]';

/** The ids whose arguments were shown forming, in order of their first piece. */
function formingIds(events: readonly BackendEvent[]): string[] {
  return [...new Set(events.flatMap((e) => (e.type === "tool-call-delta" ? [e.toolCallId] : [])))];
}

describe.each(["http2", "http1"] as const)("a tool call whose arguments never complete, over %s", (transport) => {
  let fx: Fixture;
  let stalling: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ transport, client: { stallTimeoutMs: 600_000 } });
    stalling = await startFixture({ transport, client: { stallTimeoutMs: 3_000 } });
  });
  afterAll(async () => {
    await fx.close();
    await stalling.close();
  });

  it("(d) hands out the complete call that followed it at the stall, and the turn goes on after its result", async () => {
    const turn = stalling.client.startTurn(
      userTurn(`${transport}-cut-first`, `${TWO_CALLS} [[emu:tool-cut 1]]`, { tools: [lookupTool] }),
    );
    const events = await collect(turn.stream());
    const [unfinished, complete] = formingIds(events);
    const calls = toolCallsOf(events);
    expect(calls.map((c) => [c.toolCallId, JSON.parse(c.arguments)])).toEqual([[complete, { q: "bravo" }]]);
    expect(unfinished).toBeDefined();
    expect(endOf(events)).toBe("tool-calls");
    expect(turn.pendingToolCallIds).toEqual([complete]);
    const results = [{ toolCallId: complete ?? "", content: "found b", isError: false }];
    const next = await collect(turn.resume(results));
    expect(textOf(next)).toBe("lookup returned: found b");
    expect(endOf(next)).toBe("stop");
  }, 30_000);

  it("(d) leaves its pieces out of a whole answer, and one call per answer still ends at the complete call", async () => {
    const turn = stalling.client.startTurn(
      userTurn(`${transport}-cut-held`, `${TWO_CALLS} [[emu:tool-cut 1]]`, { tools: [lookupTool] }),
    );
    const events = await collect(turn.stream(undefined, { holdEvents: true, oneToolCall: true }));
    const calls = toolCallsOf(events);
    expect(calls.map((c) => JSON.parse(c.arguments))).toEqual([{ q: "bravo" }]);
    // Only the complete call's pieces remain.
    expect(formingIds(events)).toEqual([calls[0]?.toolCallId]);
    expect(endOf(events)).toBe("tool-calls");
    await turn.close();
  }, 30_000);

  it("(b) ends the turn when the unfinished call was the only one, and a whole answer shows none of it", async () => {
    const prompt = '[[emu:tool-chunks 4]] [[emu:tool lookup {"q":"alpha"}]] [[emu:tool-cut 1]]';
    const streamed = await collect(
      fx.client.startTurn(userTurn(`${transport}-cut-only`, prompt, { tools: [lookupTool] })).stream(),
    );
    expect(formingIds(streamed)).toHaveLength(1);
    expect(toolCallsOf(streamed)).toEqual([]);
    expect(endOf(streamed)).toBe("stop");
    const held = await collect(
      fx.client
        .startTurn(userTurn(`${transport}-cut-only-held`, prompt, { tools: [lookupTool] }))
        .stream(undefined, { holdEvents: true }),
    );
    expect(held.filter((e) => e.type === "tool-call-delta" || e.type === "tool-call")).toEqual([]);
    expect(endOf(held)).toBe("stop");
  }, 30_000);
});
