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

  it("continues each chat on its own conversation when two chats sent the same first message and got different answers", async () => {
    stack.emulator.resetStats();
    lines.length = 0;
    const first = "Same opening [[emu:echo-model]]";
    const chat = (system: string) => [
      { role: "system" as const, content: system },
      { role: "user" as const, content: first },
    ];
    const a = chat("You serve tenant A.");
    const b = chat("You serve tenant B.");
    const answerA = await client.chat.completions.create({ model: "composer-1.5", messages: a });
    const answerB = await client.chat.completions.create({ model: "composer-2", messages: b });
    expect(answerA.choices[0]?.message.content).toContain("Model: composer-1.5");
    expect(answerB.choices[0]?.message.content).toContain("Model: composer-2");
    // A's second turn, after B's first: the key of [first message] alone (system prompts are not part of it) was
    // last recorded for B's conversation; the answer A echoes back decides.
    const second = await client.chat.completions.create({
      model: "composer-1.5",
      messages: [
        ...a,
        { role: "assistant", content: answerA.choices[0]?.message.content ?? "" },
        { role: "user", content: "and now [[emu:recall]]" },
      ],
    });
    expect(second.choices[0]?.message.content).toContain("First message: Same opening");
    expect(routes()).toEqual(["new", "new", "continued"]);
    const turns = stack.emulator.stats().turns;
    expect(turns).toHaveLength(3);
    expect(turns[0]?.conversationId).not.toBe(turns[1]?.conversationId);
    expect(turns[2]?.conversationId).toBe(turns[0]?.conversationId);
  });

  it("rebuilds instead of continuing when the client edited the answer it sends back; re-wrapped whitespace still continues", async () => {
    stack.emulator.resetStats();
    lines.length = 0;
    const opening = { role: "user" as const, content: "Edit me later [[emu:tokens 12]]" };
    const answer = (await client.chat.completions.create({ model: "auto", messages: [opening] })).choices[0]?.message
      .content;
    expect(answer?.length ?? 0).toBeGreaterThan(0);
    const next = { role: "user" as const, content: "go on [[emu:recall]]" };
    // The same answer, its words re-wrapped (a client's rendering): the same conversation.
    const rewrapped = `\n  ${(answer ?? "").split(" ").join("\n")}  \n`;
    await client.chat.completions.create({
      model: "auto",
      messages: [opening, { role: "assistant", content: rewrapped }, next],
    });
    // An edited answer: the checkpoint holds the unedited one, so the history is sent again (a new conversation).
    await client.chat.completions.create({
      model: "auto",
      messages: [opening, { role: "assistant", content: `${answer} (edited by the user)` }, next],
    });
    expect(routes()).toEqual(["new", "continued", "new"]);
    const turns = stack.emulator.stats().turns;
    expect(turns).toHaveLength(3);
    expect(turns[1]?.conversationId).toBe(turns[0]?.conversationId);
    expect(turns[2]?.conversationId).not.toBe(turns[0]?.conversationId);
  });
  it("rebuilds the turn after a cut answer (output cap, stop sequence): Cursor's state never held the cut text", async () => {
    // The cut ends the answer in the bridge, and Cursor's turn is canceled: it records no answer the client saw, and
    // a checkpoint it sends while canceling holds what it wrote, not the cut text. So the next turn sends the history
    // again (docs/architecture.md, "Keyed by the answer too"); an answer that was not cut continues as usual.
    const run = async (cut: Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming>) => {
      stack.emulator.resetStats();
      lines.length = 0;
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: "Hello" }];
      const first = await client.chat.completions.create({ model: "auto", messages });
      messages.push(first.choices[0]!.message, { role: "user", content: "Count [[emu:tokens 20]]" });
      const second = await client.chat.completions.create({ model: "auto", messages, ...cut });
      messages.push(second.choices[0]!.message, { role: "user", content: "Again [[emu:recall]]" });
      const third = await client.chat.completions.create({ model: "auto", messages });
      expect(third.choices[0]?.message.content).toBe("First message: Hello");
      const turns = stack.emulator.stats().turns;
      return {
        finish: second.choices[0]?.finish_reason,
        routes: routes(),
        sameState: turns[2]?.conversationId === turns[0]?.conversationId,
      };
    };
    expect(await run({})).toEqual({ finish: "stop", routes: ["new", "continued", "continued"], sameState: true });
    expect(await run({ max_tokens: 2 })).toEqual({
      finish: "length",
      routes: ["new", "continued", "new"],
      sameState: false,
    });
    expect(await run({ stop: ["charlie"] })).toEqual({
      finish: "stop",
      routes: ["new", "continued", "new"],
      sameState: false,
    });
  });
});
