/**
 * Issue 5 against the real `openai` SDK: server + real agent client + emulator upstream (no hand-written client).
 */
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const echoTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look something up",
    parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  },
};

describe("openai SDK against cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("streams text with a role delta first, content deltas, finish_reason and a usage chunk", async () => {
    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Hello streaming world" }],
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("You said: Hello streaming world");
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "").length).toBeGreaterThan(1);
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe("stop");
    const usage = chunks.at(-1)?.usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
  });

  it("answers non-streaming requests with the accumulated message and usage", async () => {
    const completion = await sdk.openai.chat.completions.create({
      model: "claude-4.5-sonnet",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Non streaming please" },
      ],
    });
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("You said: Non streaming please");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("streams reasoning as reasoning_content before the text", async () => {
    const stream = await sdk.openai.chat.completions.create({
      model: "claude-4.5-sonnet-thinking",
      stream: true,
      messages: [{ role: "user", content: "[[emu:think 6]] Think first" }],
    });
    let reasoning = "";
    let text = "";
    let sawTextBeforeReasoningEnded = false;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) {
        if (text !== "") sawTextBeforeReasoningEnded = true;
        reasoning += delta.reasoning_content;
      }
      text += delta?.content ?? "";
    }
    expect(reasoning.trim().split(/\s+/)).toHaveLength(6);
    expect(text).toBe("You said: Think first");
    expect(sawTextBeforeReasoningEnded).toBe(false);
  });

  it("resumes the parked Cursor turn for the tool result: one Run for the whole round trip", async () => {
    sdk.stack.emulator.resetStats();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'Find it [[emu:tool lookup {"q":"needle"}]]' },
    ];
    const first = await sdk.openai.chat.completions
      .stream({ model: "auto", messages, tools: [echoTool] })
      .finalChatCompletion();
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    if (call?.type !== "function") throw new Error("expected a function call");
    expect(call.function.name).toBe("lookup");
    expect(JSON.parse(call.function.arguments)).toEqual({ q: "needle" });
    expect(sdk.stack.parked.size()).toBe(1);

    messages.push(choice!.message, { role: "tool", tool_call_id: call.id, content: "found 42" });
    const second = await sdk.openai.chat.completions.create({ model: "auto", messages, tools: [echoTool] });
    expect(second.choices[0]?.message.content).toContain("lookup returned: found 42");
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(sdk.stack.emulator.stats().runStreams).toBe(1);
    expect(sdk.stack.parked.size()).toBe(0);
  });

  it("handles two parallel tool calls in one step and resumes with both results", async () => {
    sdk.stack.emulator.resetStats();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: '[[emu:tool lookup {"q":"a"}]] [[emu:tool lookup {"q":"b"}]]' },
    ];
    const first = await sdk.openai.chat.completions
      .stream({ model: "auto", messages, tools: [echoTool] })
      .finalChatCompletion();
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    messages.push(first.choices[0]!.message);
    for (const [i, call] of calls.entries()) messages.push({ role: "tool", tool_call_id: call.id, content: `r${i}` });
    const second = await sdk.openai.chat.completions.create({ model: "auto", messages, tools: [echoTool] });
    expect(second.choices[0]?.message.content).toContain("lookup returned: r0");
    expect(second.choices[0]?.message.content).toContain("lookup returned: r1");
    expect(sdk.stack.emulator.stats().runStreams).toBe(1);
  });

  it("continues a multi-turn chat from the checkpoint: flat upload and memory from state", async () => {
    sdk.stack.emulator.resetStats();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [];
    const say = async (content: string) => {
      messages.push({ role: "user", content });
      const reply = await sdk.openai.chat.completions.create({ model: "auto", messages });
      messages.push({ role: "assistant", content: reply.choices[0]?.message.content ?? "" });
      return reply.choices[0]?.message.content ?? "";
    };
    await say("My first message is about otters");
    for (let i = 2; i <= 8; i++) await say(`Turn number ${i} with some padding text to look like a real chat`);
    const recall = await say("[[emu:recall]] what did I say first?");
    expect(recall).toContain("First message: My first message is about otters");
    const turns = sdk.stack.emulator.stats().turns;
    expect(turns).toHaveLength(9);
    expect(new Set(turns.map((t) => t.conversationId)).size).toBe(1);
    const second = turns[1]!.requestBytes;
    const ninth = turns[8]!.requestBytes;
    // Replay would re-send the whole history (≈130 bytes of text per turn here). Continuation sends the new message
    // plus the checkpoint, which grows by one 32-byte turn blob id (+ 2 bytes of framing) per turn.
    const historyBytes = JSON.stringify(messages.slice(0, 16)).length;
    expect((ninth - second) / 7).toBeLessThanOrEqual(40);
    expect(ninth).toBeLessThan(historyBytes);
  });

  it("keeps concurrent conversations apart", async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sdk.openai.chat.completions.create({
          model: "auto",
          messages: [{ role: "user", content: `conversation ${i}` }],
        }),
      ),
    );
    for (const [i, r] of results.entries()) expect(r.choices[0]?.message.content).toBe(`You said: conversation ${i}`);
  });

  it("maps upstream failures to OpenAI errors the SDK understands", async () => {
    const ask = (content: string) =>
      sdk.openai.chat.completions.create({ model: "auto", messages: [{ role: "user", content }] });
    const limited = (await ask("[[emu:error usage_limit]]").catch((e: unknown) => e)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(limited.status).toBe(429);
    expect(limited.code).toBe("insufficient_quota");
    expect(limited.headers?.get("retry-after")).toBeNull();
    expect(limited.headers?.get("x-should-retry")).toBe("false");
    await expect(ask("[[emu:error internal]]")).rejects.toMatchObject({ status: expect.any(Number) });
    await expect(
      sdk.openai.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    await expect(sdk.openai.chat.completions.create({ model: "auto", messages: [] })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("offers only the tools an allowed_tools tool_choice lists, and refuses one it does not declare", async () => {
    const other: OpenAI.Chat.Completions.ChatCompletionTool = {
      type: "function",
      function: { name: "other", parameters: { type: "object", properties: {} } },
    };
    const allowed: OpenAI.Chat.Completions.ChatCompletionAllowedToolChoice = {
      type: "allowed_tools",
      allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "lookup" } }] },
    };
    const ask = (content: string) =>
      sdk.openai.chat.completions.create({
        model: "auto",
        tools: [echoTool, other],
        tool_choice: allowed,
        messages: [{ role: "user", content }],
      });
    const called = await ask('Find [[emu:tool lookup {"q":"x"}]]');
    expect(called.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: "lookup" } });
    // The other tool was not offered to Cursor, so the model cannot call it.
    const refused = await ask('Find [[emu:tool other {"q":"x"}]]');
    expect(refused.choices[0]?.finish_reason).toBe("stop");
    expect(refused.choices[0]?.message.content).toBe("Tool other is not available.");
    const unknown = sdk.openai.chat.completions.create({
      model: "auto",
      tools: [echoTool],
      tool_choice: {
        type: "allowed_tools",
        allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "nope" } }] },
      },
      messages: [{ role: "user", content: "x" }],
    });
    await expect(unknown).rejects.toMatchObject({
      status: 400,
      param: "tool_choice.allowed_tools.tools[0].function.name",
    });
  });

  it("lists models with owned_by naming the emulator and the auto alias", async () => {
    const page = await sdk.openai.models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain("default");
    expect(ids).toContain("auto");
    expect(ids).toContain("claude-4.5-sonnet-thinking");
    expect(new Set(page.data.map((m) => m.owned_by))).toEqual(new Set(["cursor-emulator"]));
    const one = await sdk.openai.models.retrieve("claude-4.5-sonnet-thinking");
    expect((one as unknown as { reasoning: boolean }).reasoning).toBe(true);
  });
});
