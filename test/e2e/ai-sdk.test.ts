/**
 * The Vercel AI SDK (`ai` + `@ai-sdk/openai-compatible`, what OpenCode embeds) against `cursor-bridge serve`:
 * `streamText` with a tool that executes, over several steps, resuming the parked Cursor turn for the tool result.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type ServedBridge, startServedBridge } from "./support/served-bridge.js";

describe("AI SDK streamText → cursor-bridge serve → emulator", () => {
  let served: ServedBridge;

  beforeAll(async () => {
    served = await startServedBridge();
  });
  afterAll(async () => served?.close());

  it("executes a tool and finishes in a second step on the same Run", async () => {
    served.emulator.resetStats();
    const provider = createOpenAICompatible({
      name: "bridge",
      baseURL: served.baseURL,
      apiKey: "e2e",
      includeUsage: true,
    });
    const executed: string[] = [];
    const result = streamText({
      model: provider("auto"),
      prompt: 'How warm is it in Oslo? [[emu:tool weather {"city":"Oslo"}]]',
      tools: {
        weather: tool({
          description: "Current temperature of a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            executed.push(city);
            return { city, celsius: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(5),
    });
    let streamed = "";
    for await (const delta of result.textStream) streamed += delta;
    const steps = await result.steps;

    expect(executed).toEqual(["Oslo"]);
    expect(steps).toHaveLength(2);
    expect(steps[0]?.finishReason).toBe("tool-calls");
    expect(steps[1]?.finishReason).toBe("stop");
    expect(streamed).toContain("weather returned:");
    expect(streamed).toContain('"celsius":21');
    expect((await result.totalUsage).outputTokens).toBeGreaterThan(0);
    const stats = served.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
  });

  it("providerOptions reasoningEffort reaches Cursor as the model's tier, max and flat ids included", async () => {
    const provider = createOpenAICompatible({ name: "bridge", baseURL: served.baseURL, apiKey: "e2e" });
    const cases = [
      ["gpt-5.5", "high", "Model: gpt-5.5; params: fast=false,reasoning=high;", "gpt-5.5-high"],
      [
        "claude-opus-4-8",
        "max",
        "Model: claude-opus-4-8; params: context=300k,effort=max,thinking=true;",
        "claude-opus-4-8-thinking-max",
      ],
      ["gpt-5.3-codex", "xhigh", "Model: gpt-5.3-codex-xhigh; params: none;", "gpt-5.3-codex-xhigh"],
    ] as const;
    for (const [model, reasoningEffort, sent, ranAs] of cases) {
      const result = await generateText({
        model: provider(model),
        prompt: "Which model? [[emu:echo-model]]",
        providerOptions: { bridge: { reasoningEffort } },
      });
      expect(result.text, model).toContain(sent);
      expect(result.response.modelId, model).toBe(ranAs);
    }
  });
});
