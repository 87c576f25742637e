/**
 * A parked turn is resumed only by a request that continues the history it parked with (docs/architecture.md, "Tool
 * results"): the parking request's messages (system prompts aside), then the very calls the turn handed out, then
 * their results. A request that answers the same call ids over an edited history is routed like any other request
 * and never reaches the open Run, which only knows the history it parked with. Proven through real HTTP with the
 * emulator's `[[emu:recall]]` (it reads the first message from the conversation state Cursor holds) and the access
 * log's `turn=` field.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
const ALPHA = 'ALPHA [[emu:tool get_weather {"city":"Paris"}]] [[emu:recall]]';
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

describe("resuming a parked turn requires the history it parked with", () => {
  let stack: Stack;
  let client: OpenAI;
  const lines: string[] = [];
  const routes = (door = "chat/completions") =>
    lines.flatMap((line) => new RegExp(`POST /v1/${door} 200.*turn=(\\w+)`).exec(line)?.[1] ?? []);

  beforeAll(async () => {
    stack = await startStack({ logLines: lines });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => stack.close());
  beforeEach(() => {
    lines.length = 0;
  });

  /** Parks a turn on ALPHA's call; returns the assistant message as the client echoes it. */
  async function park(system?: string) {
    const messages: ChatMessage[] = [{ role: "user", content: ALPHA }];
    if (system !== undefined) messages.unshift({ role: "system", content: system });
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    const assistant = first.choices[0]!.message;
    const call = assistant.tool_calls![0]!;
    if (call.type !== "function") throw new Error("expected a function call");
    expect(stack.parked.size()).toBe(1);
    return { assistant, call };
  }

  it("resumes the turn when the request continues its history (whitespace and key order aside)", async () => {
    const { assistant, call } = await park();
    const echoed: ChatMessage = {
      role: "assistant",
      content: `  ${assistant.content ?? ""}\r\n`,
      tool_calls: [{ ...call, function: { name: call.function.name, arguments: '{ "city" : "Paris" }' } }],
    };
    const reply = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [{ role: "user", content: ALPHA }, echoed, { role: "tool", tool_call_id: call.id, content: "sunny" }],
    });
    expect(reply.choices[0]?.message.content).toContain("get_weather returned: sunny");
    expect(routes()).toEqual(["new", "resumed"]);
    expect(stack.parked.size()).toBe(0);
  });

  it("resumes it when only the system prompt changed (clients rewrite it on every request)", async () => {
    const { assistant, call } = await park("You are helpful.");
    const reply = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [
        { role: "system", content: "You are helpful. Today is another day." },
        { role: "user", content: ALPHA },
        assistant,
        { role: "tool", tool_call_id: call.id, content: "sunny" },
      ],
    });
    expect(reply.choices[0]?.message.content).toContain("get_weather returned: sunny");
    expect(routes()).toEqual(["new", "resumed"]);
  });

  it("does not resume it for the same call id over another first message: the answer is the new history's", async () => {
    const { assistant, call } = await park();
    const reply = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [
        { role: "user", content: "BETA [[emu:recall]]" },
        assistant,
        { role: "tool", tool_call_id: call.id, content: "sunny" },
      ],
    });
    const text = reply.choices[0]?.message.content ?? "";
    expect(text).toContain("First message: BETA");
    expect(text).not.toContain("ALPHA");
    expect(routes()).toEqual(["new", "new"]);
    // The superseded turn was closed, not left parked until its timeout.
    expect(stack.parked.size()).toBe(0);
  });

  it("does not resume it when the call's arguments were edited", async () => {
    const { assistant, call } = await park();
    const edited: ChatMessage = {
      role: "assistant",
      content: assistant.content,
      tool_calls: [{ ...call, function: { name: call.function.name, arguments: '{"city":"Rome"}' } }],
    };
    const reply = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [{ role: "user", content: ALPHA }, edited, { role: "tool", tool_call_id: call.id, content: "rainy" }],
    });
    expect(reply.choices[0]?.message.content).toContain("get_weather returned: rainy");
    // Nor is the checkpoint continued: it holds the unedited call, so the history is sent again.
    expect(routes()).toEqual(["new", "new"]);
    expect(stack.parked.size()).toBe(0);
  });

  it("over /v1/responses with store: false, an edited first message does not resume the turn", async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: ALPHA }];
    const tools: OpenAI.Responses.FunctionTool[] = [
      {
        type: "function",
        name: "get_weather",
        strict: false,
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    ];
    const first = await client.responses.create({ model: "auto", store: false, input, tools });
    const call = first.output.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error(`no function call: ${JSON.stringify(first.output)}`);
    const answer = { type: "function_call_output" as const, call_id: call.call_id, output: "sunny" };
    const forked = await client.responses.create({
      model: "auto",
      store: false,
      tools,
      input: [{ role: "user", content: "BETA [[emu:recall]]" }, call, answer],
    });
    expect(forked.output_text).toContain("First message: BETA");
    expect(forked.output_text).not.toContain("ALPHA");
    expect(routes("responses")).toEqual(["new", "new"]);
    expect(stack.parked.size()).toBe(0);
  });

  it("over /v1/messages, the tool_use block echoed back as an object resumes the turn", async () => {
    const anthropic = new Anthropic({ baseURL: stack.baseURL.replace(/\/v1$/, ""), apiKey: "local", maxRetries: 0 });
    const tools: Anthropic.Tool[] = [
      { name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } },
    ];
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: ALPHA }];
    const first = await anthropic.messages.create({ model: "auto", max_tokens: 512, tools, messages });
    const use = first.content.find((block) => block.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error(`no tool_use: ${JSON.stringify(first.content)}`);
    messages.push({ role: "assistant", content: first.content });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] });
    const reply = await anthropic.messages.create({ model: "auto", max_tokens: 512, tools, messages });
    const text = reply.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
    expect(text).toContain("get_weather returned: sunny");
    expect(routes("messages")).toEqual(["new", "resumed"]);
  });

  it("does not resume it on another model: the answer comes from the model asked for, and says so", async () => {
    const prompt = 'Weather? [[emu:tool get_weather {"city":"Oslo"}]] [[emu:echo-model]]';
    const messages: ChatMessage[] = [{ role: "user", content: prompt }];
    const first = await client.chat.completions.create({ model: "composer-1", messages, tools: [weather] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "snow" });
    const reply = await client.chat.completions.create({ model: "gpt-5.2", messages, tools: [weather] });
    expect(reply.model).toBe("gpt-5.2");
    expect(reply.choices[0]?.message.content).toContain("Model: gpt-5.2;");
    expect(reply.choices[0]?.message.content).toContain("get_weather returned: snow");
    expect(routes()).toEqual(["new", "continued"]);
    expect(stack.parked.size()).toBe(0);
    // Asked for the same model, it resumes.
    lines.length = 0;
    const again: ChatMessage[] = [{ role: "user", content: prompt }];
    const parked = await client.chat.completions.create({ model: "composer-1", messages: again, tools: [weather] });
    const id = parked.choices[0]!.message.tool_calls![0]!.id;
    again.push(parked.choices[0]!.message, { role: "tool", tool_call_id: id, content: "snow" });
    await client.chat.completions.create({ model: "composer-1", messages: again, tools: [weather] });
    expect(routes()).toEqual(["new", "resumed"]);
  });

  it("does not resume it when a tool its Run offers is no longer declared (a tool added since is fine)", async () => {
    const clock: OpenAI.Chat.Completions.ChatCompletionTool = {
      type: "function",
      function: { name: "get_time", parameters: { type: "object", properties: {} } },
    };
    const extra: OpenAI.Chat.Completions.ChatCompletionTool = {
      type: "function",
      function: { name: "get_date", parameters: { type: "object", properties: {} } },
    };
    for (const [tools, route] of [
      [[weather, clock, extra], "resumed"],
      [[weather], "continued"],
    ] as const) {
      lines.length = 0;
      const messages: ChatMessage[] = [{ role: "user", content: ALPHA }];
      const first = await client.chat.completions.create({ model: "auto", messages, tools: [weather, clock] });
      const call = first.choices[0]!.message.tool_calls![0]!;
      messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny" });
      const reply = await client.chat.completions.create({ model: "auto", messages, tools: [...tools] });
      expect(reply.choices[0]?.message.content).toContain("get_weather returned: sunny");
      expect(routes()).toEqual(["new", route]);
      expect(stack.parked.size()).toBe(0);
    }
  });

  it("over /v1/responses, a custom tool's call echoed back as its input resumes the turn", async () => {
    const tools = [{ type: "custom" as const, name: "apply_patch", description: "Applies a patch." }];
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: "user", content: 'Patch it [[emu:tool apply_patch {"input":"*** Begin Patch"}]]' },
    ];
    const first = await client.responses.create({ model: "auto", store: false, input, tools });
    const call = first.output.find((item) => item.type === "custom_tool_call");
    if (call?.type !== "custom_tool_call") throw new Error(`no custom tool call: ${JSON.stringify(first.output)}`);
    expect(call.input).toBe("*** Begin Patch");
    const reply = await client.responses.create({
      model: "auto",
      store: false,
      tools,
      input: [...input, call, { type: "custom_tool_call_output", call_id: call.call_id, output: "Done!" }],
    });
    expect(reply.output_text).toContain("apply_patch returned: Done!");
    expect(routes("responses")).toEqual(["new", "resumed"]);
  });

  it("is closed at once when the conversation moves on without its results, and the turn continues from its checkpoint", async () => {
    // The results answered before a new user message (a client that batches them), then the user interrupting the
    // calls (the call echoed, no result: Claude Code's and Codex's history after an interrupt, as each door accepts).
    for (const next of [
      (assistant: ChatMessage, id: string): ChatMessage[] => [
        assistant,
        { role: "tool", tool_call_id: id, content: "sunny" },
        { role: "user", content: "And now? [[emu:recall]]" },
      ],
      (assistant: ChatMessage): ChatMessage[] => [assistant, { role: "user", content: "Never mind. [[emu:recall]]" }],
    ]) {
      lines.length = 0;
      const { assistant, call } = await park();
      const reply = await client.chat.completions.create({
        model: "auto",
        tools: [weather],
        messages: [{ role: "user", content: ALPHA }, ...next(assistant, call.id)],
      });
      // Continued from the checkpoint the parked turn stored (Cursor's state holds ALPHA), not rebuilt, not resumed.
      expect(reply.choices[0]?.message.content).toContain("ALPHA");
      expect(routes()).toEqual(["new", "continued"]);
      expect(stack.parked.size()).toBe(0);
    }
  });

  it("is neither resumed nor closed by a request of another virtual key, however alike", async () => {
    await withTwoKeys(async ({ as, team, turns }) => {
      const messages = await parkAs(as("key-a"));
      await as("key-b").chat.completions.create({ model: "auto", messages, tools: [weather] });
      expect(team.parked.size()).toBe(1);
      const owned = await as("key-a").chat.completions.create({ model: "auto", messages, tools: [weather] });
      expect(owned.choices[0]?.message.content).toContain("get_weather returned: sunny");
      expect(turns()).toEqual(["new", "new", "resumed"]);
    });
  });

  it("an identical request of another virtual key is not replayed the answer of the resumed turn", async () => {
    await withTwoKeys(async ({ as, turns }) => {
      const messages = await parkAs(as("key-a"));
      await as("key-a").chat.completions.create({ model: "auto", messages, tools: [weather] });
      await as("key-b").chat.completions.create({ model: "auto", messages, tools: [weather] });
      await as("key-a").chat.completions.create({ model: "auto", messages, tools: [weather] });
      // key-a: new, resumed; key-b: its own Run (new), not key-a's recorded answer; key-a again: replayed.
      expect(turns()).toEqual(["new", "resumed", "new", "replayed"]);
    });
  });
});

/**
 * A stack of its own with one named account that virtual keys share (`x-test-key` names the key): `run` gets a client
 * per key and the `turn=` field of each chat completion logged.
 */
async function withTwoKeys(
  run: (t: { as: (key: string) => OpenAI; team: Stack; turns: () => string[] }) => Promise<void>,
): Promise<void> {
  const lines: string[] = [];
  const team = await startStack({ logLines: lines, accounts: { team: { userId: "team-user" } } });
  try {
    const as = (key: string) =>
      new OpenAI({
        baseURL: team.baseURL,
        apiKey: "local",
        maxRetries: 0,
        defaultHeaders: { "x-test-account": "team", "x-test-key": key },
      });
    const turns = () => lines.flatMap((line) => /POST \/v1\/chat\/completions 200.*turn=(\w+)/.exec(line)?.[1] ?? []);
    await run({ as, team, turns });
  } finally {
    await team.close();
  }
}

/** Parks ALPHA's turn at its tool call as `client`; the messages that answer it. */
async function parkAs(client: OpenAI): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [{ role: "user", content: ALPHA }];
  const first = await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
  const call = first.choices[0]!.message.tool_calls![0]!;
  messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny" });
  return messages;
}

describe("moving on from a parked turn does not wait for its Run to close", () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    // Closing a Run waits up to a minute for Cursor to end it, and the parked Run below takes that long.
    stack = await startStack({ cancelGraceMs: 60_000 });
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => stack.close());

  it("the new message's Run starts while the parked one is still closing, from the checkpoint it parked with", async () => {
    const SLOW = 'GAMMA [[emu:tool get_weather {"city":"Oslo"}]] [[emu:slow-cancel 60000]]';
    const first = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [{ role: "user", content: SLOW }],
    });
    const assistant = first.choices[0]!.message;
    expect(stack.parked.size()).toBe(1);
    const parkedRun = stack.emulator.stats().turns.length - 1;
    const reply = await client.chat.completions.create({
      model: "auto",
      tools: [weather],
      messages: [{ role: "user", content: SLOW }, assistant, { role: "user", content: "Never mind. [[emu:recall]]" }],
    });
    // Continued from the checkpoint the turn parked with, answered while the parked Run has not ended yet.
    expect(reply.choices[0]?.message.content).toContain("GAMMA");
    const turns = stack.emulator.stats().turns;
    expect(turns[parkedRun]?.outcome).toBeUndefined();
    expect(turns.at(-1)?.outcome).toBe("completed");
    expect(stack.parked.size()).toBe(0);
  }, 120_000);
});
