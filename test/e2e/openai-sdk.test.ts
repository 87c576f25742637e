/**
 * The `openai` npm client (real-clients.md) against `cursor-bridge serve`: streamed completions accumulated by
 * `chat.completions.stream(...).finalChatCompletion()`, and a tool round trip that resumes the parked Cursor turn.
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
});
