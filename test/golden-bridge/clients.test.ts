/**
 * The golden SSE bytes, fed to the real client libraries through an injected `fetch` (no sockets): openai-node's
 * stream reader and the Vercel AI SDK's openai-compatible provider (what OpenCode uses) must read them as intended.
 */
import { readFileSync } from "node:fs";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "./scenarios.js";

function sseFetch(name: string): typeof fetch {
  const body = readFileSync(`${FIXTURES_DIR}${name}.sse`, "utf8");
  return async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
}

function openai(name: string): OpenAI {
  return new OpenAI({ apiKey: "test", baseURL: "http://127.0.0.1:9/v1", fetch: sseFetch(name), maxRetries: 0 });
}

const messages = [{ role: "user" as const, content: "hi" }];

describe("openai-node reads the golden streams", () => {
  it("accumulates parallel tool calls and the usage chunk", async () => {
    const stream = openai("tool-calls-parallel").chat.completions.stream({ model: "cursor-test", messages });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(
      completion.choices[0]?.message.tool_calls?.map((call) => call.type === "function" && call.function.name),
    ).toEqual(["glob", "grep"]);
  });

  it("reassembles split unicode tool arguments", async () => {
    const completion = await openai("tool-call-unicode-split")
      .chat.completions.stream({ model: "cursor-test", messages })
      .finalChatCompletion();
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({
      path: "grüße/日本.txt",
      content: 'héllo 👋🏽 wörld\n"quoted"',
    });
  });

  it("surfaces the mid-stream error frame as an APIError with its message", async () => {
    const stream = await openai("backend-error-mid-stream").chat.completions.create({
      model: "cursor-test",
      messages,
      stream: true,
    });
    const read = async () => {
      for await (const _chunk of stream) {
        // drain
      }
    };
    await expect(read()).rejects.toThrow("The Cursor stream closed unexpectedly.");
  });
});

describe("the AI SDK openai-compatible provider reads the golden streams", () => {
  function model(name: string) {
    const provider = createOpenAICompatible({
      name: "bridge",
      baseURL: "http://127.0.0.1:9/v1",
      fetch: sseFetch(name),
      includeUsage: true,
    });
    return provider("cursor-test");
  }

  it("reads reasoning_content as reasoning and content as text", async () => {
    const result = streamText({ model: model("reasoning-content"), prompt: "hi" });
    expect(await result.text).toBe("Hi there!");
    expect(await result.reasoningText).toBe("The user greets me. I should greet back.");
    expect(await result.finishReason).toBe("stop");
  });

  it("reads a tool call with its arguments, finish reason and usage", async () => {
    const result = streamText({ model: model("tool-call-unicode-split"), prompt: "hi" });
    const calls = await result.toolCalls;
    expect(calls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([
      ["call_write_1", "write", { path: "grüße/日本.txt", content: 'héllo 👋🏽 wörld\n"quoted"' }],
    ]);
    expect(await result.finishReason).toBe("tool-calls");
  });

  it("reads the usage chunk", async () => {
    const result = streamText({ model: model("usage"), prompt: "hi" });
    expect(await result.text).toBe("Counted.");
    expect(await result.usage).toMatchObject({ inputTokens: 1200, outputTokens: 35, totalTokens: 1235 });
  });
});
