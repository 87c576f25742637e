/**
 * An identical retry of a resuming request keeps receiving the answer when the first request's client goes away
 * (the usual reason a client retries): the resumed turn runs while anyone reads it (src/engine/recording.ts), and is
 * canceled only once nobody does. Through real HTTP: the first request is a raw fetch aborted mid-answer, the retry
 * the real openai SDK.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

describe("a retry replaying a resumed answer", () => {
  let stack: Stack;
  let client: OpenAI;
  const lines: string[] = [];
  beforeAll(async () => {
    stack = await startStack({ logLines: lines });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => stack.close());

  /** Parks a turn whose answer after the result streams slowly; returns the request that resumes it. */
  async function parked(prompt: string) {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: prompt }];
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "found it" });
    return { model: "auto", messages, tools: [lookup], stream: true as const };
  }

  /** Starts the resuming request as a raw stream; resolves once its first bytes arrived. */
  async function startFirst(body: unknown, controller: AbortController) {
    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    return reader;
  }

  it("keeps streaming to the retry when the request that resumed the turn disconnects", async () => {
    const body = await parked('Find [[emu:tool lookup {"q":"x"}]] [[emu:tokens 30]] [[emu:rate 10]]');
    const runs = stack.emulator.stats().runStreams;
    const first = new AbortController();
    const reader = await startFirst(body, first);
    const retry = await client.chat.completions.create(body);
    first.abort();
    await reader.cancel().catch(() => undefined);
    let text = "";
    for await (const chunk of retry) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toContain("lookup returned: found it");
    expect(stack.emulator.stats().runStreams).toBe(runs);
    const replayed = lines.filter((line) => /POST \/v1\/chat\/completions 200.*turn=replayed/.test(line)).at(-1);
    expect(replayed).toBeDefined();
    expect(replayed).not.toMatch(/error|canceled/);
  });

  it("still cancels the turn when nobody reads it any more", async () => {
    const body = await parked('Again [[emu:tool lookup {"q":"y"}]] [[emu:tokens 200]] [[emu:rate 10]]');
    const first = new AbortController();
    const reader = await startFirst(body, first);
    first.abort();
    await reader.cancel().catch(() => undefined);
    // The Run is canceled (Cursor sees the cancel or the stream closed), not run to the end of its 200 tokens.
    const turn = () => stack.emulator.stats().turns.at(-1);
    for (let i = 0; i < 300 && turn()?.outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(["cancelled", "client_closed"]).toContain(turn()?.outcome);
  });
});
