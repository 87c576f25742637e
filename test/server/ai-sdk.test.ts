/**
 * Issue 5 against the Vercel AI SDK (`@ai-sdk/openai-compatible`): multi-step with a tool that executes, the way
 * OpenCode drives cursor-bridge.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

describe("Vercel AI SDK against cursor-bridge + emulator", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => stack.close());

  const provider = () =>
    createOpenAICompatible({ name: "cursor-bridge", baseURL: stack.baseURL, apiKey: "local", includeUsage: true });

  const weather = (calls: string[]) =>
    tool({
      description: "Current weather for a city",
      inputSchema: jsonSchema<{ city: string }>({
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
        additionalProperties: false,
      }),
      execute: async ({ city }) => {
        calls.push(city);
        return { city, forecast: "sunny" };
      },
    });

  it("runs a multi-step streamText with a tool that executes, on one upstream Run", async () => {
    stack.emulator.resetStats();
    const calls: string[] = [];
    const result = streamText({
      model: provider()("auto"),
      prompt: 'What is the weather? [[emu:tool weather {"city":"Lisbon"}]]',
      tools: { weather: weather(calls) },
      stopWhen: stepCountIs(5),
    });
    let text = "";
    for await (const delta of result.textStream) text += delta;
    expect(calls).toEqual(["Lisbon"]);
    expect(text).toContain('weather returned: {"city":"Lisbon","forecast":"sunny"}');
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0]?.finishReason).toBe("tool-calls");
    expect(steps[1]?.finishReason).toBe("stop");
    const usage = await result.totalUsage;
    expect(usage.outputTokens).toBeGreaterThan(0);
    expect(stack.emulator.stats().runStreams).toBe(1);
  });

  it("runs generateText (non-streaming) with parallel tool calls", async () => {
    stack.emulator.resetStats();
    const calls: string[] = [];
    const result = await generateText({
      model: provider()("auto"),
      prompt: '[[emu:tool weather {"city":"Oslo"}]] [[emu:tool weather {"city":"Rome"}]]',
      tools: { weather: weather(calls) },
      stopWhen: stepCountIs(5),
    });
    expect(calls.sort()).toEqual(["Oslo", "Rome"]);
    expect(result.text).toContain("Oslo");
    expect(result.text).toContain("Rome");
    expect(stack.emulator.stats().runStreams).toBe(1);
  });

  it("passes reasoning through as reasoning parts", async () => {
    const result = streamText({ model: provider()("claude-4.5-sonnet-thinking"), prompt: "[[emu:think 4]] hello" });
    let reasoning = "";
    for await (const part of result.fullStream) if (part.type === "reasoning-delta") reasoning += part.text;
    expect(reasoning.trim().split(/\s+/)).toHaveLength(4);
    expect(await result.text).toBe("You said: hello");
  });
});
