import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type McpToolCall, McpToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { ArgumentStreams } from "./argument-streams.js";
import { createToolNameMap } from "./tool-names.js";
import { defaultWorkspaceEnvironment } from "./workspace-environment.js";

function streams(dropped: string[] = []): ArgumentStreams {
  let n = 0;
  const listener = {
    argumentsDropped: (toolCallId: string, reason: string) => dropped.push(`${toolCallId}: ${reason}`),
  };
  return new ArgumentStreams(
    {
      environment: defaultWorkspaceEnvironment(),
      tools: [],
      toolNames: createToolNameMap(["lookup", "weather"]),
      systemPrompt: "",
      takenToolCallIds: new Set(),
      newHex: () => `${n++}`.padStart(8, "0"),
    },
    listener,
  );
}

/** The `mcp_tool_call` of a partial or `tool_call_started`: its `McpArgs` name the tool and, when given, an id. */
function mcp(toolName: string, toolCallId = ""): McpToolCall {
  return create(McpToolCallSchema, { args: { name: toolName, toolName, toolCallId } });
}

/** The id a piece of the call was shown under. */
function shown(s: ArgumentStreams, envelopeId: string, tool: McpToolCall, text: string): string | undefined {
  const event = s.update(envelopeId, tool, text);
  return event?.type === "tool-call-delta" ? event.toolCallId : undefined;
}

// The envelopes' call_id and McpArgs.tool_call_id need not be equal (cursor-protocol-addendum-3 T5).
describe("ArgumentStreams.claim", () => {
  it("pairs mcp_args with the call whose updates carried its McpArgs id, not an older forming call of that tool", () => {
    const s = streams();
    const cut = shown(s, "call_1", mcp("lookup", "toolu_a"), '{"q":"al');
    const whole = shown(s, "call_2", mcp("lookup", "toolu_b"), '{"q":"bravo"}');
    expect(s.open).toBe(2);
    expect(s.claim("toolu_b", "lookup")).toBe(whole);
    expect(s.open).toBe(1);
    expect(s.claim("toolu_a", "lookup")).toBe(cut);
    expect(s.open).toBe(0);
  });

  it("pairs by the envelope's id when the two are equal", () => {
    const s = streams();
    const first = shown(s, "call_1", mcp("lookup", "call_1"), '{"q":"a"}');
    const second = shown(s, "call_2", mcp("lookup", "call_2"), '{"q":"b"}');
    expect(s.claim("call_2", "lookup")).toBe(second);
    expect(s.claim("call_1", "lookup")).toBe(first);
  });

  it("without an id in the updates' McpArgs, falls back to the oldest forming call of the same tool", () => {
    const s = streams();
    const weather = shown(s, "call_1", mcp("weather"), '{"q":"w"}');
    const first = shown(s, "call_2", mcp("lookup"), '{"q":"a"}');
    const second = shown(s, "call_3", mcp("lookup"), '{"q":"b"}');
    expect(s.claim("toolu_x", "lookup")).toBe(first);
    expect(s.claim("toolu_y", "lookup")).toBe(second);
    expect(s.claim("toolu_z", "weather")).toBe(weather);
    expect(s.open).toBe(0);
  });

  it("does not hand a call's id to an mcp_args whose id another update named for a different call", () => {
    const s = streams();
    shown(s, "call_1", mcp("lookup", "toolu_a"), '{"q":"al');
    // Nothing of toolu_b streamed: it is handed out complete under its own id, and call_1 keeps forming.
    expect(s.claim("toolu_b", "lookup")).toBeUndefined();
    expect(s.open).toBe(1);
  });

  it("shows no pieces of a call whose mcp_args came first (T3), when they name it only in their McpArgs", () => {
    const s = streams();
    expect(s.claim("toolu_a", "lookup")).toBeUndefined();
    expect(s.update("call_1", mcp("lookup", "toolu_a"), '{"q"')).toBeUndefined();
    expect(s.update("call_1", mcp("lookup", "toolu_a"), '{"q":"a"}')).toBeUndefined();
    expect(s.open).toBe(0);
    // The same with equal ids.
    expect(s.claim("call_2", "lookup")).toBeUndefined();
    expect(s.update("call_2", mcp("lookup", "call_2"), '{"q"')).toBeUndefined();
    expect(s.open).toBe(0);
  });

  it("pairs mcp_args by any McpArgs id the call's updates carried, when a later update names another", () => {
    const s = streams();
    const id = shown(s, "call_1", mcp("lookup", "toolu_old"), '{"q"');
    expect(shown(s, "call_1", mcp("lookup", "toolu_new"), '{"q":"x"}')).toBe(id);
    expect(s.claim("toolu_new", "lookup")).toBe(id);
    expect(s.open).toBe(0);
  });

  it("pairs an mcp_args that names no id with the oldest forming call of its tool, whatever its updates named", () => {
    const s = streams();
    const first = shown(s, "call_1", mcp("lookup", "toolu_a"), '{"q":"a"}');
    const second = shown(s, "call_2", mcp("lookup", "toolu_b"), '{"q":"b"}');
    expect(s.claim("", "lookup")).toBe(first);
    expect(s.claim("", "lookup")).toBe(second);
    expect(s.open).toBe(0);
  });

  it("never hands another forming call's id to the mcp_args of a call that has not streamed yet", () => {
    const s = streams();
    // call_1's name is known, its text not yet: nothing of it reached the caller.
    expect(s.update("call_1", mcp("lookup"), "")).toBeUndefined();
    const other = shown(s, "call_2", mcp("lookup"), '{"q":"b"}');
    expect(s.claim("call_1", "lookup")).toBeUndefined();
    expect(s.update("call_1", mcp("lookup"), '{"q":"a"}')).toBeUndefined();
    expect(s.open).toBe(1);
    expect(s.claim("call_2", "lookup")).toBe(other);
    // The same when the call is known only by the id its McpArgs carried.
    const t = streams();
    expect(t.update("call_3", mcp("lookup", "toolu_c"), "")).toBeUndefined();
    const forming = shown(t, "call_4", mcp("lookup"), '{"q":"d"}');
    expect(t.claim("toolu_c", "lookup")).toBeUndefined();
    expect(t.open).toBe(1);
    expect(t.claim("toolu_d", "lookup")).toBe(forming);
  });

  it("drops pieces shown of a call whose mcp_args came first, once an update links them by its McpArgs id", () => {
    const dropped: string[] = [];
    const s = streams(dropped);
    expect(s.claim("toolu_a", "lookup")).toBeUndefined();
    // The first pieces name no McpArgs id: they cannot be told from a new call, so they are shown.
    const id = shown(s, "call_1", mcp("lookup"), '{"q"');
    expect(s.open).toBe(1);
    expect(s.update("call_1", mcp("lookup", "toolu_a"), '{"q":"a"}')).toBeUndefined();
    expect(s.open).toBe(0);
    expect(dropped).toEqual([`${id}: its mcp_args came before it streamed`]);
  });

  it("pairs an mcp_args that names no id with a forming call whose updates named none, before one that named its own", () => {
    const s = streams();
    const named = shown(s, "call_1", mcp("lookup", "toolu_a"), '{"q":"a');
    const unnamed = shown(s, "call_2", mcp("lookup"), '{"q":"b"}');
    expect(s.claim("", "lookup")).toBe(unnamed);
    expect(s.claim("toolu_a", "lookup")).toBe(named);
    expect(s.open).toBe(0);
  });

  it("drops the pieces of a forming call Cursor completes without its mcp_args; one never shown is only closed", () => {
    const dropped: string[] = [];
    const s = streams(dropped);
    const id = shown(s, "call_1", mcp("lookup"), '{"q"');
    s.update("call_2", mcp("lookup"), "");
    s.complete("call_1");
    s.complete("call_2");
    expect(s.open).toBe(0);
    expect(dropped).toEqual([`${id}: Cursor completed it without its mcp_args`]);
    expect(s.update("call_2", mcp("lookup"), '{"q":"b"}')).toBeUndefined();
  });
});
