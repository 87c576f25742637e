import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { foldTurn } from "../kit/translate.js";
import { type ChatTranslationOptions, chatTranslation } from "./events.js";

async function* from(events: BackendEvent[]): AsyncIterable<BackendEvent> {
  yield* events;
}

const base = { id: "chatcmpl-1", created: 7, model: "m" } as const;
const usage: BackendEvent = { type: "usage", usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 } };

const toChatCompletion = (events: AsyncIterable<BackendEvent>, options: Omit<ChatTranslationOptions, "includeUsage">) =>
  foldTurn(events, chatTranslation({ ...options, includeUsage: false }));

describe("the chat completion folded from the same translation", () => {
  it("accumulates text, reasoning and usage", async () => {
    const completion = await toChatCompletion(
      from([
        { type: "reasoning-delta", text: "think" },
        { type: "text-delta", text: "Hi " },
        { type: "text-delta", text: "there" },
        usage,
        { type: "turn-end", reason: "stop" },
      ]),
      { ...base, reasoning: "reasoning_content" },
    );
    expect(completion).toEqual({
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "Hi there", refusal: null, reasoning_content: "think" },
          finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
    });
  });

  it("returns content null and the tool calls when only tools were called", async () => {
    const completion = await toChatCompletion(
      from([
        { type: "tool-call", toolCallId: "a", toolName: "read", arguments: '{"path":"ü.txt"}' },
        { type: "tool-call", toolCallId: "b", toolName: "ls", arguments: "{}" },
        { type: "turn-end", reason: "tool-calls" },
      ]),
      { ...base, reasoning: "none" },
    );
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "read", arguments: '{"path":"ü.txt"}' } },
          { id: "b", type: "function", function: { name: "ls", arguments: "{}" } },
        ],
      },
      finish_reason: "tool_calls",
      logprobs: null,
    });
    expect(completion.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it("keeps think tags in content in think-tags mode and omits reasoning_content", async () => {
    const completion = await toChatCompletion(
      from([
        { type: "reasoning-delta", text: "r" },
        { type: "text-delta", text: "t" },
        { type: "turn-end", reason: "stop" },
      ]),
      { ...base, reasoning: "think-tags" },
    );
    expect(completion.choices[0]?.message).toEqual({
      role: "assistant",
      content: "<think>r</think>\n\nt",
      refusal: null,
    });
  });

  it("rejects with the source's error", async () => {
    async function* failing(): AsyncIterable<BackendEvent> {
      yield { type: "text-delta", text: "x" };
      throw new Error("boom");
    }
    await expect(toChatCompletion(failing(), { ...base, reasoning: "none" })).rejects.toThrow("boom");
  });
});
