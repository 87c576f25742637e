/**
 * Concurrent requests answering one parked turn: exactly one resumes it; an identical request (a client retrying)
 * gets that answer replayed without a new Run; a different one gets a 409 that SDKs do not retry. Runs are counted
 * at the emulator: nothing reaches Cursor twice.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { BackendEvent } from "../../src/backend/types.js";
import type { EngineRequest } from "../../src/engine/index.js";
import { ProxyError } from "../../src/util/errors.js";
import { type Stack, startStack } from "../support/stack.js";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
};

const stacks: Stack[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
});

/** Parks a turn on one `lookup` call and returns the messages a follow-up needs. */
async function parkedTurn(client: OpenAI) {
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: "user", content: 'Find [[emu:tool lookup {"q":"needle"}]]' },
  ];
  const first = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
  const message = first.choices[0]!.message;
  const call = message.tool_calls![0]!;
  if (call.type !== "function") throw new Error("expected a function call");
  messages.push(message);
  return { messages, call, model: first.model };
}

function engineRequest(callId: string, arguments_: string, result: string): EngineRequest {
  return {
    model: "auto",
    instructions: [],
    messages: [
      { role: "user", parts: [{ type: "text", text: 'Find [[emu:tool lookup {"q":"needle"}]]' }] },
      {
        role: "assistant",
        text: "",
        reasoning: [],
        toolCalls: [{ id: callId, name: "lookup", arguments: arguments_ }],
      },
      { role: "tool", toolCallId: callId, content: result, isError: false },
    ],
    tools: [{ name: "lookup", description: "", inputSchema: { type: "object", properties: {} } }],
    options: { reasoning: false, reasoningEffort: undefined, toolChoice: "auto" },
  };
}

async function collect(events: AsyncIterable<BackendEvent>): Promise<string> {
  let text = "";
  for await (const event of events) if (event.type === "text-delta") text += event.text;
  return text;
}

describe("concurrent requests for one parked turn", () => {
  it("resumes once and replays the answer to identical concurrent requests: one Run in all", async () => {
    const lines: string[] = [];
    const stack = await startStack({ logLines: lines });
    stacks.push(stack);
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    const { messages, call, model } = await parkedTurn(client);
    messages.push({ role: "tool", tool_call_id: call.id, content: "found 42" });
    const replies = await Promise.all(
      [0, 1, 2].map(() => client.chat.completions.create({ model: "auto", messages, tools: [lookup] })),
    );
    // `auto` is answered by the model Cursor routed it to; a replayed answer names that model too, as the answer it
    // replays did (it once named the catalogue's `default` instead).
    expect(model).not.toBe("default");
    for (const reply of replies) {
      expect(reply.choices[0]?.message.content).toContain("lookup returned: found 42");
      expect(reply.model).toBe(model);
    }
    expect(stack.emulator.stats().runStreams).toBe(1);
    const routes = lines.flatMap((line) => /POST \/v1\/chat\/completions 200.*turn=(\w+)/.exec(line)?.[1] ?? []);
    expect(routes.sort()).toEqual(["new", "replayed", "replayed", "resumed"]);

    // A client retrying after a network error, once the answer is complete: still no new Run.
    const retry = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(retry.choices[0]?.message.content).toBe(replies[0]?.choices[0]?.message.content);
    expect(retry.model).toBe(model);
    expect(stack.emulator.stats().runStreams).toBe(1);
    const retryLine = lines.filter((line) => /POST \/v1\/chat\/completions 200.*turn=replayed/.test(line)).at(-1);
    expect(retryLine).toContain(`model=${model}`);
  });

  it("a streamed retry of a resumed request names the same model as the answer it replays", async () => {
    const stack = await startStack();
    stacks.push(stack);
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    const { messages, call, model } = await parkedTurn(client);
    messages.push({ role: "tool", tool_call_id: call.id, content: "found 42" });
    const resumed = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(resumed.model).toBe(model);
    const stream = await client.chat.completions.create({ model: "auto", messages, tools: [lookup], stream: true });
    const models = new Set<string>();
    let text = "";
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe(resumed.choices[0]?.message.content);
    expect([...models]).toEqual([model]);
    expect(stack.emulator.stats().runStreams).toBe(1);
  });

  it("answers a different request for a turn being resumed with 409 and x-should-retry: false", async () => {
    const stack = await startStack();
    stacks.push(stack);
    const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "x", maxRetries: 0 });
    const { call } = await parkedTurn(client);
    const signal = new AbortController().signal;
    // The first request has resumed the turn and is still reading its answer.
    const owner = await stack.engine.startTurn(engineRequest(call.id, call.function.arguments, "found 42"), signal);
    expect(owner.route).toBe("resumed");

    const different = engineRequest(call.id, call.function.arguments, "something else");
    const rejected = await stack.engine.startTurn(different, signal).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(ProxyError);
    expect((rejected as ProxyError).status).toBe(409);

    const response = await fetch(`${stack.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        tools: [lookup],
        messages: [
          { role: "user", content: 'Find [[emu:tool lookup {"q":"needle"}]]' },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: call.id, content: "something else" },
        ],
      }),
    });
    expect(response.status).toBe(409);
    expect(response.headers.get("x-should-retry")).toBe("false");
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe("conflict_error");

    // The identical request, started while the owner is still reading, gets the same answer.
    const identical = stack.engine.startTurn(engineRequest(call.id, call.function.arguments, "found 42"), signal);
    const ownerText = await collect(owner.events);
    const replayed = await identical;
    expect(replayed.route).toBe("replayed");
    expect(await collect(replayed.events)).toBe(ownerText);
    expect(ownerText).toContain("lookup returned: found 42");
    expect(stack.emulator.stats().runStreams).toBe(1);
  });
});
