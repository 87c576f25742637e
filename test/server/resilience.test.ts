/**
 * Issue 5 error classes and lifecycle through the real server + agent client + emulator: client disconnect,
 * stalls, upstream down, auth failures, parked turns that are gone (expired, bridge restarted), security defaults.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../src/server/listen.js";
import { type Stack, startStack } from "../support/stack.js";

const lookup: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup",
    description: "Look up",
    parameters: { type: "object", properties: { q: { type: "string" } } },
  },
};

const stacks: Stack[] = [];
async function stack(options: Parameters<typeof startStack>[0] = {}) {
  const s = await startStack(options);
  stacks.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((s) => s.close()));
});

const waitFor = async (condition: () => boolean, timeoutMs = 5000) => {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("lifecycle and failures", () => {
  it("cancels the upstream turn when the client disconnects mid-stream", async () => {
    const s = await stack();
    const controller = new AbortController();
    const res = await fetch(`${s.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        stream: true,
        messages: [{ role: "user", content: "[[emu:tokens 500]] [[emu:rate 40]] go" }],
      }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    controller.abort();
    await waitFor(() => s.emulator.stats().turns[0]?.outcome !== undefined);
    const turn = s.emulator.stats().turns[0]!;
    expect(["cancelled", "client_closed"]).toContain(turn.outcome);
    expect(turn.endedAt! - turn.startedAt).toBeLessThan(5000);
  });

  // Before its answer starts, a turn follows the client through the request's own abort (run-surface.ts), not the
  // streamed body's cancel: under the Node listener it watches Node's response (watchClientGone, request-io.ts).
  for (const stream of [false, true]) {
    it(`cancels the upstream turn when the client of a ${stream ? "streamed" : "whole"} answer leaves before it starts`, async () => {
      const s = await stack();
      const controller = new AbortController();
      const sent = fetch(`${s.baseURL}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "auto", stream, messages: [{ role: "user", content: "[[emu:stall 0]] hi" }] }),
        signal: controller.signal,
      });
      sent.catch(() => undefined);
      await waitFor(() => s.emulator.stats().turns.length > 0);
      controller.abort();
      await waitFor(() => s.emulator.stats().turns[0]?.outcome !== undefined);
      expect(["cancelled", "client_closed"]).toContain(s.emulator.stats().turns[0]?.outcome);
      await expect(sent).rejects.toThrow();
    });
  }

  it("turns an upstream stall into 504 before output and an error frame after output", async () => {
    const s = await stack({ stallTimeoutMs: 600 });
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "[[emu:stall 0]] hi" }] }),
    ).rejects.toMatchObject({ status: 504 });
    const res = await fetch(`${s.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "auto",
        stream: true,
        messages: [{ role: "user", content: "[[emu:stall 3]] hello there friend" }],
      }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const frames = text.trim().split("\n\n");
    expect(JSON.parse(frames.at(-1)!.slice(6))).toMatchObject({ error: { code: "upstream_timeout" } });
    expect(text).not.toContain("[DONE]");
  });

  it("answers 503 when the upstream is unreachable", async () => {
    const s = await stack();
    await s.emulator.close();
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: "gpt-5.2", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect([502, 503]).toContain((error as InstanceType<typeof OpenAI.APIError>).status);
  });

  it("answers 401 with a login hint when Cursor keeps rejecting the token", async () => {
    const s = await stack();
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    const error = (await client.chat.completions
      .create({ model: "auto", messages: [{ role: "user", content: "[[emu:error unauthenticated]]" }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/cursor-bridge login/);
  });

  it("continues from the checkpoint when the parked turn expired", async () => {
    const s = await stack({ parkedTurnTtlMs: 300 });
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'first [[emu:tool lookup {"q":"x"}]]' },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    await waitFor(() => s.parked.size() === 0);
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "late result" });
    const second = await client.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(second.choices[0]?.message.content).toContain("lookup returned: late result");
    expect(s.emulator.stats().runStreams).toBe(2);
  });

  it("rebuilds from the full history when the bridge restarted (no parked turn, no checkpoint)", async () => {
    const first = await stack();
    const client1 = new OpenAI({ baseURL: first.baseURL, apiKey: "x", maxRetries: 0 });
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: 'Remember otters [[emu:tool lookup {"q":"x"}]]' },
    ];
    const reply = await client1.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    const call = reply.choices[0]!.message.tool_calls![0]!;
    const restarted = await stack({ existingEmulator: first.emulator });
    const client2 = new OpenAI({ baseURL: restarted.baseURL, apiKey: "x", maxRetries: 0 });
    messages.push(reply.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "after restart" });
    const resumed = await client2.chat.completions.create({ model: "auto", messages, tools: [lookup] });
    expect(resumed.choices[0]?.message.content).toContain("lookup returned: after restart");
    messages.push({ role: "assistant", content: resumed.choices[0]?.message.content ?? "" });
    messages.push({ role: "user", content: "[[emu:recall]]" });
    const recall = await client2.chat.completions.create({ model: "auto", messages });
    expect(recall.choices[0]?.message.content).toContain("First message: Remember otters");
  });

  it("puts reasoning in <think> tags when configured", async () => {
    const s = await stack({ app: { reasoningOutput: "think-tags" } });
    const client = new OpenAI({ baseURL: s.baseURL, apiKey: "x", maxRetries: 0 });
    const r = await client.chat.completions.create({
      model: "claude-4.5-sonnet-thinking",
      messages: [{ role: "user", content: "[[emu:think 3]] hey" }],
    });
    expect(r.choices[0]?.message.content).toMatch(/^<think>[\s\S]+<\/think>[\s\S]*You said: hey$/);
  });
});

describe("security defaults", () => {
  it("refuses a non-loopback bind without an API key and accepts loopback", async () => {
    const app = { fetch: () => new Response("ok") };
    await expect(listen(app, { host: "0.0.0.0", port: 0, apiKey: undefined })).rejects.toThrow(/without an API key/);
    const server = await listen(app, { host: "127.0.0.1", port: 0, apiKey: undefined });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await server.close();
  });

  it("checks the local API key end to end and never logs it or the Cursor token", async () => {
    const lines: string[] = [];
    const s = await stack({ app: { apiKey: "local-secret-key-123" }, logLines: lines });
    const bad = new OpenAI({ baseURL: s.baseURL, apiKey: "wrong", maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
    const good = new OpenAI({ baseURL: s.baseURL, apiKey: "local-secret-key-123", maxRetries: 0 });
    const r = await good.chat.completions.create({ model: "auto", messages: [{ role: "user", content: "hi" }] });
    expect(r.choices[0]?.message.content).toBe("You said: hi");
    const all = lines.join("\n");
    expect(all).not.toContain("local-secret-key-123");
    expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\./);
  });
});
