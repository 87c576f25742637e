/**
 * The usage of a response that ends on tool calls before the turn's first checkpoint, through the real SDKs: Cursor
 * has counted nothing yet and no checkpoint told the context size, so the engine's estimate has no input figure. The
 * kit reports the request's input estimate instead (src/surfaces/kit/input-estimate.ts), on every door, streamed and
 * not: the figure a cut answer reports and the gateway bills (docs/api.md).
 */
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

/** 34 words ahead of the call, so that the estimate (4 characters a token) is well away from 0. */
const WORDS = Array.from({ length: 34 }, (_, i) => `word${i}`).join(" ");
const PROMPT = `${WORDS} [[emu:tool lookup {"q":"x"}]]`;
/** The output of the call: ceil(9 characters of {"q":"x"} / 4). */
const CALL_TOKENS = 3;
const parameters = { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"] };

const sdk = useSdkStack();

/** The request's characters at 4 a token, at the least; its keys and the tool's schema add a few dozen tokens. */
function expectEstimate(input: number | undefined): void {
  expect(input).toBeGreaterThanOrEqual(Math.ceil(PROMPT.length / 4));
  expect(input).toBeLessThan(Math.ceil(PROMPT.length / 4) + 60);
}

describe("a response that ends on tool calls before any checkpoint reports the request's input estimate", () => {
  const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
    { type: "function", function: { name: "lookup", description: "Look something up", parameters } },
  ];
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: PROMPT }];

  it("OpenAI chat, streamed with include_usage and not: prompt_tokens, the same figure both ways", async () => {
    const whole = await sdk.openai.chat.completions.create({ model: "auto", messages, tools });
    expect(whole.choices[0]?.finish_reason).toBe("tool_calls");
    expectEstimate(whole.usage?.prompt_tokens);
    expect(whole.usage?.completion_tokens).toBe(CALL_TOKENS);
    expect(whole.usage?.total_tokens).toBe((whole.usage?.prompt_tokens ?? 0) + CALL_TOKENS);

    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      usage = chunk.usage ?? usage;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe("tool_calls");
    expect(usage).toEqual(whole.usage);
  });

  it("OpenAI Responses, streamed and not: input_tokens, the same figure both ways", async () => {
    const responseTools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "lookup", description: "Look something up", parameters, strict: false },
    ];
    const ask = { model: "auto", input: PROMPT, tools: responseTools, store: false };
    const whole = await sdk.openai.responses.create(ask);
    expect(whole.output.some((item) => item.type === "function_call")).toBe(true);
    expectEstimate(whole.usage?.input_tokens);
    expect(whole.usage?.output_tokens).toBe(CALL_TOKENS);
    expect(whole.usage?.total_tokens).toBe((whole.usage?.input_tokens ?? 0) + CALL_TOKENS);

    const stream = sdk.openai.responses.stream(ask);
    const streamed = await stream.finalResponse();
    expect(streamed.usage).toEqual(whole.usage);
  });

  it("Anthropic Messages: message_start's estimate is the one message_delta reports", async () => {
    const ask = {
      model: "auto",
      max_tokens: 1024,
      messages: [{ role: "user" as const, content: PROMPT }],
      tools: [{ name: "lookup", description: "Look something up", input_schema: parameters }],
    };
    const stream = sdk.anthropic.messages.stream(ask);
    let start: number | undefined;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") start = event.message.usage.input_tokens;
    });
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expectEstimate(start);
    expect(message.usage.input_tokens).toBe(start);
    const whole = await sdk.anthropic.messages.create(ask);
    expect(whole.usage.input_tokens).toBe(start);
  });
});
