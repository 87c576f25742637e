/**
 * The `openai` npm client (real-clients.md) against `cursor-bridge serve`: streamed completions accumulated by
 * `chat.completions.stream(...).finalChatCompletion()`, a tool round trip that resumes the parked Cursor turn, a step's
 * parallel calls far apart that `call_count` keeps in one response, and a parallel call that comes after the response
 * with the step's first call ended (no `call_count`, a long gap): the client gets it as the next assistant tool call
 * once it has answered the first (docs/protocol.md §4.6).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedBridge, startServedBridge } from "./support/served-bridge.js";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look a key up in the project's notes",
    parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  },
};

describe("openai SDK → cursor-bridge serve → emulator", () => {
  let served: ServedBridge;
  let client: OpenAI;

  beforeAll(async () => {
    served = await startServedBridge();
    client = new OpenAI({ baseURL: served.baseURL, apiKey: "e2e", maxRetries: 0 });
  });
  afterAll(async () => served?.close());

  it("accumulates a streamed answer with finalChatCompletion()", async () => {
    const completion = await client.chat.completions
      .stream({
        model: "auto",
        messages: [{ role: "user", content: "Hello from the openai SDK" }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(completion.choices[0]?.message.content).toBe("You said: Hello from the openai SDK");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it("runs a tool round trip on one upstream Run", async () => {
    served.emulator.resetStats();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'What is the deploy key? [[emu:tool lookup {"key":"deploy"}]]' },
    ];
    const first = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup] })
      .finalChatCompletion();
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const call = choice?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("expected a function tool call");
    expect(call.function.name).toBe("lookup");
    expect(JSON.parse(call.function.arguments)).toEqual({ key: "deploy" });

    messages.push(choice!.message, { role: "tool", tool_call_id: call.id, content: "k-7731" });
    const second = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup] })
      .finalChatCompletion();
    expect(second.choices[0]?.finish_reason).toBe("stop");
    expect(second.choices[0]?.message.content).toContain("lookup returned: k-7731");
    const stats = served.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
    expect(stats.turns.map((t) => t.outcome)).toEqual(["completed"]);
  });

  it("hands a step's parallel calls out in one response however far apart they come (call_count)", async () => {
    served.emulator.resetStats();
    // 500 ms between the calls, far past the bridge's batch window: the count keeps them together.
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      {
        role: "user",
        content: 'Keys? [[emu:tool-gap 500]] [[emu:tool lookup {"key":"a"}]] [[emu:tool lookup {"key":"b"}]]',
      },
    ];
    const first = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup] })
      .finalChatCompletion();
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    const calls = choice?.message.tool_calls ?? [];
    expect(calls.map((call) => (call.type === "function" ? JSON.parse(call.function.arguments).key : "?"))).toEqual([
      "a",
      "b",
    ]);
    messages.push(choice!.message);
    for (const call of calls) messages.push({ role: "tool", tool_call_id: call.id, content: `value-${call.id}` });
    const last = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup] })
      .finalChatCompletion();
    expect(last.choices[0]?.finish_reason).toBe("stop");
    const stats = served.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
    expect(stats.turns.map((t) => t.outcome)).toEqual(["completed"]);
  }, 30_000);
});

describe("openai SDK → cursor-bridge serve → emulator without call_count", () => {
  let served: ServedBridge;
  let client: OpenAI;

  beforeAll(async () => {
    served = await startServedBridge({ toolCallCount: false });
    client = new OpenAI({ baseURL: served.baseURL, apiKey: "e2e", maxRetries: 0 });
  });
  afterAll(async () => served?.close());

  it("hands a parallel call that comes after the segment ended out as the next assistant tool call", async () => {
    served.emulator.resetStats();
    // The second call of the step comes 1.5 s after the first: far past the bridge's batch window.
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      {
        role: "user",
        content: 'Keys? [[emu:tool-gap 1500]] [[emu:tool lookup {"key":"a"}]] [[emu:tool lookup {"key":"b"}]]',
      },
    ];
    const answers: Record<string, string> = { a: "value-a", b: "value-b" };
    const seen: string[] = [];
    for (let round = 0; round < 2; round++) {
      const response = await client.chat.completions
        .stream({ model: "auto", messages, tools: [lookup] })
        .finalChatCompletion();
      const choice = response.choices[0];
      expect(choice?.finish_reason).toBe("tool_calls");
      const calls = choice?.message.tool_calls ?? [];
      // One call per response, each with its whole arguments.
      expect(calls).toHaveLength(1);
      const call = calls[0];
      if (call?.type !== "function") throw new Error("expected a function tool call");
      const key = (JSON.parse(call.function.arguments) as { key: string }).key;
      seen.push(key);
      messages.push(choice!.message, { role: "tool", tool_call_id: call.id, content: answers[key] ?? "?" });
    }
    expect(seen).toEqual(["a", "b"]);
    const last = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup] })
      .finalChatCompletion();
    expect(last.choices[0]?.finish_reason).toBe("stop");
    expect(last.choices[0]?.message.content).toContain("lookup returned: value-a");
    expect(last.choices[0]?.message.content).toContain("lookup returned: value-b");
    // Both results went to Cursor's one step on the one Run.
    const stats = served.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
    expect(stats.turns.map((t) => t.outcome)).toEqual(["completed"]);
  }, 60_000);

  it("keeps a step's parallel calls in one response, or gives one per response with parallel_tool_calls: false", async () => {
    const ask = 'Keys? [[emu:tool lookup {"key":"a"}]] [[emu:tool lookup {"key":"b"}]]';
    const keysOf = (calls: OpenAI.Chat.Completions.ChatCompletionMessageToolCall[] | undefined) =>
      (calls ?? []).map((call) => (call.type === "function" ? JSON.parse(call.function.arguments).key : "?"));
    const together = await client.chat.completions
      .stream({ model: "auto", messages: [{ role: "user", content: ask }], tools: [lookup] })
      .finalChatCompletion();
    expect(keysOf(together.choices[0]?.message.tool_calls)).toEqual(["a", "b"]);

    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: `${ask} one` }];
    const seen: string[] = [];
    for (let round = 0; round < 2; round++) {
      const response = await client.chat.completions
        .stream({ model: "auto", messages, tools: [lookup], parallel_tool_calls: false })
        .finalChatCompletion();
      const choice = response.choices[0];
      expect(choice?.finish_reason).toBe("tool_calls");
      const calls = choice?.message.tool_calls;
      expect(keysOf(calls)).toHaveLength(1);
      seen.push(...keysOf(calls));
      const call = calls?.[0];
      if (call?.type !== "function") throw new Error("expected a function tool call");
      messages.push(choice!.message, { role: "tool", tool_call_id: call.id, content: `value-${seen.at(-1)}` });
    }
    expect(seen).toEqual(["a", "b"]);
    const last = await client.chat.completions
      .stream({ model: "auto", messages, tools: [lookup], parallel_tool_calls: false })
      .finalChatCompletion();
    expect(last.choices[0]?.finish_reason).toBe("stop");
    expect(last.choices[0]?.message.content).toContain("lookup returned: value-b");
  }, 60_000);
});
