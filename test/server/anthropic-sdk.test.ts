/**
 * Issue 13 against the real Anthropic SDK: server + engine + real agent client + emulator upstream. Streaming and
 * not, a tool round trip that resumes the parked turn on one upstream Run (with a system message after the
 * tool_result, as Claude Code sends), a thinking round trip, an image, multi-turn continuation, count_tokens, the
 * Anthropic model list and each error type the SDK maps to its own class.
 */
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const MODEL = "claude-4.5-sonnet";
const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const bash: Anthropic.Tool = {
  name: "Bash",
  description: "Run a shell command",
  input_schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
    additionalProperties: false,
  },
};

/** Claude Code places system messages inside `messages[]`; the SDK's types do not know them. */
const systemMessage = (text: string) => ({ role: "system", content: text }) as unknown as Anthropic.MessageParam;

const textOf = (message: Anthropic.Message) =>
  message.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe("Anthropic SDK against cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("streams a text answer the SDK accumulates, with message events in order", async () => {
    const stream = sdk.anthropic.messages.stream({
      model: MODEL,
      max_tokens: 1024,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: "Hello streaming world" }],
    });
    const types: string[] = [];
    stream.on("streamEvent", (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(textOf(message)).toBe("You said: Hello streaming world");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(types.filter((type) => type === "content_block_delta").length).toBeGreaterThan(1);
  });

  it("reports an input estimate in message_start and Cursor's counts in message_delta", async () => {
    // 60 emulator tokens (runs of non-blank characters) in 349 characters: the estimate (4 characters a token) and
    // Cursor's count differ, so each event's figure is recognisable.
    const text = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const stream = sdk.anthropic.messages.stream({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: "user", content: text }],
    });
    let start: Anthropic.Usage | undefined;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_start") start = { ...event.message.usage };
    });
    const message = await stream.finalMessage();
    expect(start?.input_tokens).toBeGreaterThanOrEqual(Math.ceil(text.length / 4));
    expect(start?.input_tokens).toBeLessThan(Math.ceil(text.length / 4) + 20);
    expect(start?.cache_read_input_tokens ?? undefined).toBeUndefined();
    // The emulator counts U = 60 uncached and writes them to the cache (docs/emulator.md, token counts).
    expect(message.usage).toMatchObject({
      input_tokens: 60,
      cache_creation_input_tokens: 60,
      cache_read_input_tokens: 0,
    });
  });

  it("keeps the input estimate of a response that ends on tool_use before Cursor counted the turn", async () => {
    const content = `Please run the command for me now [[emu:tool Bash {"command":"echo hi"}]]`;
    const messages: Anthropic.MessageParam[] = [{ role: "user", content }];
    const streamed = await sdk.anthropic.messages
      .stream({ model: MODEL, max_tokens: 1024, messages, tools: [bash] })
      .finalMessage();
    expect(streamed.stop_reason).toBe("tool_use");
    expect(streamed.usage.input_tokens).toBeGreaterThan(0);
    const whole = await sdk.anthropic.messages.create({ model: MODEL, max_tokens: 1024, messages, tools: [bash] });
    expect(whole.stop_reason).toBe("tool_use");
    expect(whole.usage.input_tokens).toBe(streamed.usage.input_tokens);
  });

  it("answers a non-streaming request with one message", async () => {
    const message = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: "user", content: "Non streaming please" }],
    });
    expect(message.id).toMatch(/^msg_/);
    expect(textOf(message)).toBe("You said: Non streaming please");
    expect(message.model).toBe(MODEL);
  });

  it("runs a tool round trip on one upstream Run, with a system message after the tool_result", async () => {
    sdk.stack.emulator.resetStats();
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: 'Run it [[emu:tool Bash {"command":"echo hi"}]]' },
    ];
    const first = await sdk.anthropic.messages
      .stream({ model: MODEL, max_tokens: 1024, messages, tools: [bash] })
      .finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
    expect(call?.id).toMatch(/^toolu_/);
    expect(call?.input).toEqual({ command: "echo hi" });
    messages.push(
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call?.id ?? "", content: "hi" }] },
      systemMessage("<system-reminder>The todo list is empty.</system-reminder>"),
    );
    const second = await sdk.anthropic.messages
      .stream({ model: MODEL, max_tokens: 1024, messages, tools: [bash] })
      .finalMessage();
    expect(second.stop_reason).toBe("end_turn");
    expect(textOf(second)).toContain("Bash returned: hi");
    const stats = sdk.stack.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
    expect(stats.turns.map((turn) => turn.outcome)).toEqual(["completed"]);
  });

  it("streams thinking with a signature and accepts it back in the tool round trip", async () => {
    sdk.stack.emulator.resetStats();
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: '[[emu:think 6]] [[emu:tool Bash {"command":"pwd"}]]' },
    ];
    const request = { model: MODEL, max_tokens: 4096, thinking: { type: "adaptive" } } as const;
    const first = await sdk.anthropic.messages.stream({ ...request, messages, tools: [bash] }).finalMessage();
    const thinking = first.content[0];
    expect(thinking?.type).toBe("thinking");
    expect(thinking?.type === "thinking" && thinking.thinking.length).toBeGreaterThan(0);
    expect(thinking?.type === "thinking" && thinking.signature).toMatch(/^cb1\./);
    const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
    messages.push(
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: call?.id ?? "", content: "/work", is_error: false }],
      },
    );
    const second = await sdk.anthropic.messages.create({ ...request, messages, tools: [bash] });
    expect(textOf(second)).toContain("Bash returned: /work");
    expect(sdk.stack.emulator.stats().runStreams).toBe(1);
  });

  it("accepts a base64 image", async () => {
    const message = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 256,
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1PX } },
            { type: "text", text: "What is in the picture?" },
          ],
        },
      ],
    });
    expect(textOf(message)).toContain("What is in the picture?");
  });

  it("continues a multi-turn conversation from the checkpoint", async () => {
    sdk.stack.emulator.resetStats();
    const messages: Anthropic.MessageParam[] = [];
    const say = async (content: string) => {
      messages.push({ role: "user", content });
      const reply = await sdk.anthropic.messages.create({
        model: MODEL,
        max_tokens: 512,
        system: "Be brief.",
        messages,
      });
      messages.push({ role: "assistant", content: reply.content });
      // Claude Code rewrites its reminders on every request: the conversation must still be recognised.
      messages.push(systemMessage(`<system-reminder>turn ${messages.length}</system-reminder>`));
      return textOf(reply);
    };
    await say("My first message is about otters");
    await say("A second message");
    expect(await say("[[emu:recall]]")).toContain("First message: My first message is about otters");
    const turns = sdk.stack.emulator.stats().turns;
    expect(turns).toHaveLength(3);
    expect(new Set(turns.map((turn) => turn.conversationId)).size).toBe(1);
  });

  it("estimates tokens and lists models in Anthropic's shape", async () => {
    const counted = await sdk.anthropic.messages.countTokens({
      model: MODEL,
      messages: [{ role: "user", content: "Count these words, please." }],
      tools: [bash],
    });
    expect(counted.input_tokens).toBeGreaterThan(10);
    const models = await sdk.anthropic.models.list();
    expect(models.data.map((model) => model.id)).toContain(MODEL);
    expect(models.data[0]?.type).toBe("model");
    // The context window, where Anthropic's models list gives it.
    expect(models.data.find((model) => model.id === MODEL)?.max_input_tokens).toBe(200_000);
    expect((await sdk.anthropic.models.retrieve(MODEL)).max_input_tokens).toBe(200_000);
  });

  it("pages the model list by limit, after_id and before_id, as the SDK's auto-pagination walks it", async () => {
    const all = (await sdk.anthropic.models.list()).data.map((model) => model.id);
    expect(all.length).toBeGreaterThan(7);
    const id = (index: number) => all.at(index) ?? "";
    const walked: string[] = [];
    for await (const model of sdk.anthropic.models.list({ limit: 3 })) walked.push(model.id);
    expect(walked).toEqual(all);
    const first = await sdk.anthropic.models.list({ limit: 3 });
    expect(first.data.map((model) => model.id)).toEqual(all.slice(0, 3));
    expect(first).toMatchObject({ has_more: true, first_id: all[0], last_id: all[2] });
    const second = await first.getNextPage();
    expect(second.data.map((model) => model.id)).toEqual(all.slice(3, 6));
    const before = await sdk.anthropic.models.list({ limit: 2, before_id: id(5) });
    expect(before.data.map((model) => model.id)).toEqual(all.slice(3, 5));
    expect(before.has_more).toBe(true);
    const start = await sdk.anthropic.models.list({ limit: 10, before_id: id(1) });
    expect(start).toMatchObject({ has_more: false, first_id: all[0], last_id: all[0] });
    const last = await sdk.anthropic.models.list({ after_id: id(-2) });
    expect(last).toMatchObject({ has_more: false, data: [expect.objectContaining({ id: all.at(-1) })] });
    await expect(sdk.anthropic.models.list({ limit: 0 })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(sdk.anthropic.models.list({ after_id: "no-such-model" })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    );
  });

  it("gives the SDK its request id (request-id), on answers and on errors", async () => {
    const { response, request_id } = await sdk.anthropic.messages
      .create({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "Which request?" }] })
      .withResponse();
    expect(request_id).toBe(response.headers.get("x-request-id"));
    expect(request_id).toMatch(/\S/);
    const stream = sdk.anthropic.messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: "user", content: "x" }],
    });
    const streamed = await stream.withResponse();
    await stream.finalMessage();
    expect(streamed.request_id).toBe(streamed.response.headers.get("x-request-id"));
    const failed = await sdk.anthropic.messages
      .create({ model: "no-such-model", max_tokens: 64, messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Anthropic.NotFoundError);
    expect((failed as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/\S/);
    const page = await sdk.anthropic.models.list().withResponse();
    expect(page.request_id).toBe(page.response.headers.get("x-request-id"));
  });

  it("maps each error to the SDK's error class", async () => {
    const ask = (content: string, model = MODEL) =>
      sdk.anthropic.messages
        .create({ model, max_tokens: 64, messages: [{ role: "user", content }] })
        .catch((e: unknown) => e);
    const missing = await sdk.anthropic.messages
      .create({
        model: MODEL,
        messages: [{ role: "user", content: "x" }],
      } as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.BadRequestError);
    expect(await ask("hi", "no-such-model")).toBeInstanceOf(Anthropic.NotFoundError);
    const limited = await ask("[[emu:error usage_limit]]");
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: "error",
      error: { type: "rate_limit_error" },
    });
    expect(await ask("[[emu:error unauthenticated]]")).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(await ask("[[emu:error internal]]")).toBeInstanceOf(Anthropic.APIError);
  });
});
