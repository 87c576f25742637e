/**
 * A client tool call whose arguments Cursor starts streaming and never completes (`[[emu:tool-cut N]]`: no
 * `tool_call_started`, `mcp_args` or completion follows its first half), end to end through the agent client
 * (docs/protocol.md §4.6). A whole (held) answer leaves the unfinished call's pieces out and ends on the complete
 * calls. A streamed one cannot take back the pieces its client already has, so the turn fails as cut off
 * (`upstream_truncated`) instead of ending with a half-written call. When the unfinished call is the only one, the
 * turn's end shows it is over: the stall timeout is ten minutes there, so a turn that waited for it could only end by
 * the test's own timeout, and fail. When a complete call follows it, nothing in the stream says it is over (another
 * call's `mcp_args` does not: calls can interleave), so the stall watchdog ends the wait: those cases run with a stall
 * timeout of 3 s.
 */
import { describe, expect, it } from "vitest";
import {
  collect,
  collectUntilFailure,
  endOf,
  formingIds,
  queryTool,
  toolCallsOf,
  useFixture,
  userTurn,
} from "./harness.js";

const lookupTool = queryTool();
const TWO_CALLS = '[[emu:tool-chunks 4]] [[emu:tool lookup {"q":"alpha"}]] [[emu:tool lookup {"q":"bravo"}]]';

describe.each(["http2", "http1"] as const)("a tool call whose arguments never complete, over %s", (transport) => {
  const fx = useFixture({ transport, client: { stallTimeoutMs: 600_000 } });
  const stalling = useFixture({ transport, client: { stallTimeoutMs: 3_000 } });

  it("(d) streamed: the turn fails as cut off at the stall, never ending with the half-written call", async () => {
    const turn = stalling.client.startTurn(
      userTurn(`${transport}-cut-first`, `${TWO_CALLS} [[emu:tool-cut 1]]`, { tools: [lookupTool] }),
    );
    const { seen, failure } = await collectUntilFailure(turn.stream());
    expect(failure).toMatchObject({ detail: "upstream_truncated" });
    expect(formingIds(seen).length).toBeGreaterThan(0);
    expect(seen.some((e) => e.type === "turn-end")).toBe(false);
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

  it("(b) the unfinished call was the only one: a whole answer ends without it, a streamed one fails as cut off", async () => {
    const prompt = '[[emu:tool-chunks 4]] [[emu:tool lookup {"q":"alpha"}]] [[emu:tool-cut 1]]';
    const held = await collect(
      fx.client
        .startTurn(userTurn(`${transport}-cut-only-held`, prompt, { tools: [lookupTool] }))
        .stream(undefined, { holdEvents: true }),
    );
    expect(held.filter((e) => e.type === "tool-call-delta" || e.type === "tool-call")).toEqual([]);
    expect(endOf(held)).toBe("stop");
    const streamed = fx.client.startTurn(userTurn(`${transport}-cut-only`, prompt, { tools: [lookupTool] })).stream();
    await expect(collect(streamed)).rejects.toMatchObject({ detail: "upstream_truncated" });
  }, 30_000);
});
