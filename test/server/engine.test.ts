/**
 * The conversation engine behind /v1/chat/completions, against the emulator: routes are proven by counting upstream
 * Runs and by the access log's `turn` field.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("conversation engine over chat completions", () => {
  let stack: Stack;
  let client: OpenAI;
  const lines: string[] = [];
  const routes = () => lines.flatMap((line) => /POST \/v1\/chat\/completions.*turn=(\w+)/.exec(line)?.[1] ?? []);

  beforeAll(async () => {
    stack = await startStack({ logLines: lines });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => stack.close());

  it("continues the second turn of a tool_choice 'required' chat from its checkpoint (the hint is an instruction)", async () => {
    stack.emulator.resetStats();
    lines.length = 0;
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello there" },
    ];
    const first = await client.chat.completions.create({
      model: "auto",
      messages,
      tools: [lookup],
      tool_choice: "required",
    });
    messages.push({ role: "assistant", content: first.choices[0]?.message.content ?? "" });
    messages.push({ role: "user", content: "[[emu:recall]] and again" });
    const second = await client.chat.completions.create({
      model: "auto",
      messages,
      tools: [lookup],
      tool_choice: "required",
    });
    expect(second.choices[0]?.message.content).toContain("First message: Hello there");
    expect(routes()).toEqual(["new", "continued"]);
    const turns = stack.emulator.stats().turns;
    expect(turns).toHaveLength(2);
    expect(turns[1]?.conversationId).toBe(turns[0]?.conversationId);
  });

  it("sends Cursor hyphenated UUID conversation ids", async () => {
    stack.emulator.resetStats();
    await client.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "id please" }] });
    expect(stack.emulator.stats().turns[0]?.conversationId).toMatch(UUID);
  });

  it("answers 400 naming messages[i].tool_call_id for a tool result that answers no earlier call", async () => {
    stack.emulator.resetStats();
    const error = (await client.chat.completions
      .create({
        model: "auto",
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ id: "call_a", type: "function", function: { name: "lookup", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "call_a", content: "ok" },
          { role: "tool", tool_call_id: "call_unknown", content: "orphan" },
        ],
        tools: [lookup],
      })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(error.param).toBe("messages[3].tool_call_id");
    expect(error.message).toContain("call_unknown");
    expect(stack.emulator.stats().runStreams).toBe(0);
  });

  it("continues from the checkpoint when a call in the history is no longer parked (not an error)", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'Find [[emu:tool lookup {"q":"x"}]]' },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    await stack.parked.closeAll();
    stack.emulator.resetStats();
    lines.length = 0;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "late" });
    const second = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(second.choices[0]?.message.content).toContain("lookup returned: late");
    expect(routes()).toEqual(["continued"]);
  });
});
