import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type McpToolCall, McpToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { ArgumentStreams } from "./argument-streams.js";
import { createToolNameMap } from "./tool-names.js";
import { defaultWorkspaceEnvironment } from "./workspace-environment.js";

function streams(): ArgumentStreams {
  let n = 0;
  return new ArgumentStreams({
    environment: defaultWorkspaceEnvironment(),
    tools: [],
    toolNames: createToolNameMap(["lookup", "weather"]),
    systemPrompt: "",
    takenToolCallIds: new Set(),
    newHex: () => `${n++}`.padStart(8, "0"),
  });
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
});
