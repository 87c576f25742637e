import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { toBackendInput } from "./history.js";
import type { EngineRequest, ToolChoice } from "./types.js";

const tools = [
  { name: "a", description: "", inputSchema: {} },
  { name: "b", description: "", inputSchema: {} },
];

function request(overrides: Partial<EngineRequest> = {}, toolChoice: ToolChoice = "auto"): EngineRequest {
  return {
    model: "m",
    instructions: ["Top level."],
    messages: [
      { role: "system", text: "Inline." },
      {
        role: "user",
        parts: [
          { type: "text", text: "look" },
          { type: "image", mimeType: "image/png", data: new Uint8Array([1, 2]) },
          { type: "text", text: "here" },
        ],
      },
    ],
    tools,
    options: { reasoning: true, reasoningEffort: undefined, toolChoice },
    ...overrides,
  };
}

describe("toBackendInput", () => {
  it("passes the offered server tools on, except under tool_choice none (#27)", () => {
    const serverTools = { webSearch: { maxUses: 2 } };
    expect(toBackendInput(request({ serverTools })).serverTools).toEqual(serverTools);
    expect(toBackendInput(request({ serverTools }, "none")).serverTools).toBeUndefined();
    expect(toBackendInput(request()).serverTools).toBeUndefined();
  });

  it("puts every instruction in one leading system message and maps image parts to attachments", () => {
    const input = toBackendInput(request());
    expect(input.messages).toEqual([
      { role: "system", content: "Top level.\n\nInline." },
      { role: "user", content: "look\nhere", images: [{ mimeType: "image/png", data: new Uint8Array([1, 2]) }] },
    ]);
    expect(input.tools).toEqual(tools);
    expect(input.trailingResults).toEqual([]);
  });

  it("keeps an empty leading system message when there are no instructions", () => {
    const input = toBackendInput(
      request({ instructions: [], messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }] }),
    );
    expect(input.messages).toEqual([
      { role: "system", content: "" },
      { role: "user", content: "hi" },
    ]);
  });

  it("turns tool_choice into an instruction: none drops tools, required hints, a name narrows and hints", () => {
    expect(toBackendInput(request({}, "none")).tools).toEqual([]);
    expect(toBackendInput(request({}, "none")).messages[0]).toEqual({
      role: "system",
      content: "Top level.\n\nInline.",
    });
    expect(toBackendInput(request({}, "required")).messages[0]?.content).toMatch(/must call at least one/);
    const named = toBackendInput(request({}, { name: "b" }));
    expect(named.tools.map((tool) => tool.name)).toEqual(["b"]);
    expect(named.messages[0]?.content).toContain("'b'");
  });

  it("collects the trailing tool results with isError, in order", () => {
    const input = toBackendInput(
      request({
        messages: [
          { role: "user", parts: [{ type: "text", text: "go" }] },
          {
            role: "assistant",
            text: "",
            reasoning: [{ text: "t", opaque: "sig" }],
            toolCalls: [
              { id: "1", name: "a", arguments: "{}" },
              { id: "2", name: "b", arguments: "{}" },
            ],
          },
          { role: "tool", toolCallId: "1", content: "ok", isError: false },
          { role: "tool", toolCallId: "2", content: "boom", isError: true },
        ],
      }),
    );
    expect(input.trailingResults).toEqual([
      { toolCallId: "1", content: "ok", isError: false },
      { toolCallId: "2", content: "boom", isError: true },
    ]);
    // The history keeps the flag too, so a state rebuilt from it tells Cursor which call failed.
    expect(input.messages.slice(-2)).toEqual([
      { role: "tool", toolCallId: "1", content: "ok" },
      { role: "tool", toolCallId: "2", content: "boom", isError: true },
    ]);
  });

  it("rejects a tool result that answers no earlier call, naming messages[i].tool_call_id", () => {
    const bad = request({
      messages: [
        { role: "user", parts: [{ type: "text", text: "go" }] },
        { role: "tool", toolCallId: "nope", content: "x", isError: false },
      ],
    });
    const error = (() => {
      try {
        toBackendInput(bad);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).status).toBe(400);
    expect((error as ProxyError).param).toBe("messages[1].tool_call_id");
  });

  it("names the field where the door's request gave the call id, when the door says", () => {
    const bad = request({
      messages: [
        { role: "user", parts: [{ type: "text", text: "go" }] },
        { role: "tool", toolCallId: "nope", content: "x", isError: false, param: "input[3].call_id" },
      ],
    });
    expect(() => toBackendInput(bad)).toThrow(
      expect.objectContaining({
        param: "input[3].call_id",
        message: "input[3].call_id 'nope' does not answer a tool call of an earlier assistant message.",
      }),
    );
  });

  it("rejects a second result for one call, naming where the door gave it; a call made again may be answered again", () => {
    const call = { id: "call_1", name: "lookup", arguments: "{}" };
    const assistant = { role: "assistant" as const, text: "", reasoning: [], toolCalls: [call] };
    const result = { role: "tool" as const, toolCallId: "call_1", content: "x", isError: false };
    const twice = request({
      messages: [{ role: "user", parts: [{ type: "text", text: "go" }] }, assistant, result, { ...result, param: "p" }],
    });
    expect(() => toBackendInput(twice)).toThrow(
      expect.objectContaining({
        status: 400,
        param: "p",
        message: "p 'call_1' answers a tool call that an earlier result already answered.",
      }),
    );
    const again = request({
      messages: [{ role: "user", parts: [{ type: "text", text: "go" }] }, assistant, result, assistant, result],
    });
    expect(toBackendInput(again).trailingResults).toHaveLength(1);
  });
});
