/**
 * Two results for one tool call (two `tool` messages, `tool_result` blocks or `function_call_output` items with the
 * same id) are a 400 naming the second one in the door's own words and error shape, before any Run: never two results
 * forwarded to Cursor for one call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";
import { HTTP_DOORS } from "./doors.js";
import { expectErrorShape } from "./error-shape.js";

const tool = { name: "lookup", parameters: { type: "object", properties: {} } };
const cases: Record<string, { body: Record<string, unknown>; param: string }> = {
  chat: {
    param: "messages[3].tool_call_id",
    body: {
      model: "auto",
      tools: [{ type: "function", function: tool }],
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "first" },
        { role: "tool", tool_call_id: "call_1", content: "second" },
      ],
    },
  },
  messages: {
    param: "messages.2.content.1.tool_use_id",
    body: {
      model: "auto",
      max_tokens: 64,
      tools: [{ name: "lookup", input_schema: tool.parameters }],
      messages: [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "first" },
            { type: "tool_result", tool_use_id: "toolu_1", content: "second" },
          ],
        },
      ],
    },
  },
  responses: {
    param: "input[3].call_id",
    body: {
      model: "auto",
      store: false,
      tools: [{ type: "function", ...tool }],
      input: [
        { role: "user", content: "go" },
        { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "first" },
        { type: "function_call_output", call_id: "call_1", output: "second" },
      ],
    },
  },
};

describe("a second result for one tool call", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack.close());

  it.each(HTTP_DOORS.map((door) => [door.name, door] as const))("is a 400 naming it at %s", async (name, door) => {
    const { body, param } = cases[name]!;
    stack.emulator.resetStats();
    const response = await fetch(`${stack.baseURL.replace(/\/v1$/, "")}${door.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    const escaped = param.replace(/[.[\]]/g, "\\$&");
    expectErrorShape(door, (await response.json()) as Record<string, unknown>, {
      type: "invalid_request_error",
      message: new RegExp(`^${escaped} '.+' answers a tool call that an earlier result already answered\\.$`),
      param,
    });
    expect(stack.emulator.stats().runStreams).toBe(0);
  });
});
