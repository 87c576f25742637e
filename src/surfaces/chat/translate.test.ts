import { describe, expect, it } from "vitest";
import { parseChatCompletionRequest } from "./parse.js";
import { toTurnInput } from "./translate.js";

const tool = (name: string) => ({
  type: "function",
  function: {
    name,
    description: `${name} tool`,
    parameters: { type: "object", properties: { a: { type: "string" } } },
  },
});

function input(body: Record<string, unknown>) {
  return toTurnInput(parseChatCompletionRequest({ model: "m", ...body }).request);
}

describe("toTurnInput", () => {
  it("translates every message kind into an engine message", () => {
    const result = input({
      messages: [
        { role: "system", content: "s" },
        {
          role: "developer",
          content: [
            { type: "text", text: "d1" },
            { type: "text", text: "d2" },
          ],
        },
        { role: "user", content: "u" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "r" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "a" },
            { type: "refusal", refusal: "no" },
          ],
        },
      ],
    });
    expect(result.request.messages).toEqual([
      { role: "system", text: "s" },
      { role: "system", text: "d1\nd2" },
      { role: "user", parts: [{ type: "text", text: "u" }] },
      { role: "assistant", text: "", reasoning: [], toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", content: "r", isError: false },
      { role: "assistant", text: "a\nno", reasoning: [], toolCalls: [] },
    ]);
    expect(result.request.instructions).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it("maps tools, defaulting description and schema", () => {
    const result = input({
      messages: [{ role: "user", content: "x" }],
      tools: [tool("a"), { type: "function", function: { name: "b" } }],
    });
    expect(result.request.tools).toEqual([
      { name: "a", description: "a tool", inputSchema: { type: "object", properties: { a: { type: "string" } } } },
      { name: "b", description: "", inputSchema: { type: "object", properties: {} } },
    ]);
    expect(result.request.options.toolChoice).toBe("auto");
  });

  it("passes tool_choice to the engine and warns that Cursor cannot enforce it", () => {
    const messages = [{ role: "user", content: "x" }];
    const none = input({ messages, tools: [tool("a")], tool_choice: "none" });
    expect(none.request.options.toolChoice).toBe("none");
    expect(none.warnings).toHaveLength(1);
    const required = input({ messages, tools: [tool("a"), tool("b")], tool_choice: "required" });
    expect(required.request.tools.map((t) => t.name)).toEqual(["a", "b"]);
    expect(required.request.options.toolChoice).toBe("required");
    expect(required.warnings[0]).toMatch(/required/);
    const named = input({
      messages,
      tools: [tool("a"), tool("b")],
      tool_choice: { type: "function", function: { name: "b" } },
    });
    expect(named.request.options.toolChoice).toEqual({ name: "b" });
    expect(named.warnings[0]).toContain("'b'");
  });

  it("maps reasoning effort, stream flags and unenforceable limits", () => {
    const messages = [{ role: "user", content: "x" }];
    expect(input({ messages })).toMatchObject({
      request: { options: { reasoning: true, reasoningEffort: undefined } },
      stream: false,
      includeUsage: false,
    });
    expect(input({ messages, reasoning_effort: "none" }).request.options).toMatchObject({
      reasoning: false,
      reasoningEffort: "none",
    });
    expect(input({ messages, reasoning_effort: "minimal" }).request.options.reasoningEffort).toBe("low");
    expect(input({ messages, reasoning_effort: "xhigh" }).request.options.reasoningEffort).toBe("high");
    expect(input({ messages, stream: true, stream_options: { include_usage: true } })).toMatchObject({
      stream: true,
      includeUsage: true,
    });
    // The output cap is enforced by the kit (kit/stop-sequences.ts): no warning.
    expect(input({ messages, max_tokens: 5, max_completion_tokens: 5 }).warnings).toEqual([]);
  });

  it("asks for one tool call per answer on parallel_tool_calls: false, and only then", () => {
    const messages = [{ role: "user", content: "x" }];
    const one = input({ messages, tools: [tool("a")], parallel_tool_calls: false });
    expect(one.request.oneToolCallPerAnswer).toBe(true);
    expect(one.warnings).toEqual([]);
    expect(input({ messages, parallel_tool_calls: true }).request.oneToolCallPerAnswer).toBeUndefined();
    expect(input({ messages }).request.oneToolCallPerAnswer).toBeUndefined();
  });
});
