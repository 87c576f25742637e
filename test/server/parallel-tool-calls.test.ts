/**
 * A step's parallel tool calls that Cursor announces with `tool_requests_listed.call_count` reach the client as one
 * assistant message however far apart they come (docs/protocol.md §4.6): the batch window is only for a step whose
 * count Cursor did not send. The emulator spaces the calls with `[[emu:tool-gap MS]]`, far past the bridge's 40 ms
 * window; the real SDKs read each surface, streamed and whole.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkClients, useSdkStack } from "../support/sdk-clients.js";
import { type Stack, startStack } from "../support/stack.js";

const CALLS = '[[emu:tool lookup {"q":"a"}]] [[emu:tool lookup {"q":"b"}]] [[emu:tool lookup {"q":"c"}]]';
const GAPPED = `Look these up. [[emu:tool-gap 300]] ${CALLS}`;
const MODEL = "claude-4.5-sonnet";
const schema = { type: "object" as const, properties: { q: { type: "string" } }, required: ["q"] };
const chatTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "lookup", description: "Looks something up.", parameters: schema },
};
const messagesTool: Anthropic.Tool = { name: "lookup", description: "Looks something up.", input_schema: schema };
const responsesTool: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "lookup",
  description: "Looks something up.",
  parameters: schema,
  strict: false,
};

const chatQueries = (message: OpenAI.Chat.Completions.ChatCompletionMessage | undefined) =>
  (message?.tool_calls ?? []).map((call) => (call.type === "function" ? JSON.parse(call.function.arguments).q : "?"));
const toolUses = (message: Anthropic.Message) =>
  message.content.filter((block): block is Anthropic.ToolUseBlock => block.type === "tool_use");
const textOf = (message: Anthropic.Message) =>
  message.content.map((block) => (block.type === "text" ? block.text : "")).join("");

describe("parallel tool calls with call_count, further apart than the batch window", () => {
  const sdk = useSdkStack();

  /** The turn ran on one Run and completed: every result went to Cursor's one step. */
  const expectOneCompletedRun = () => {
    const stats = sdk.stack.emulator.stats();
    expect(stats.runStreams + stats.runSseStreams).toBe(1);
    expect(stats.turns.map((turn) => turn.outcome)).toEqual(["completed"]);
  };

  it.each([true, false])(
    "chat completions (stream: %s): one assistant message with the three calls",
    async (stream) => {
      sdk.stack.emulator.resetStats();
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: GAPPED }];
      const ask = () =>
        stream
          ? sdk.openai.chat.completions.stream({ model: "auto", messages, tools: [chatTool] }).finalChatCompletion()
          : sdk.openai.chat.completions.create({ model: "auto", messages, tools: [chatTool] });
      const first = await ask();
      expect(first.choices[0]?.finish_reason).toBe("tool_calls");
      expect(chatQueries(first.choices[0]?.message)).toEqual(["a", "b", "c"]);
      messages.push(first.choices[0]!.message);
      for (const call of first.choices[0]?.message.tool_calls ?? []) {
        if (call.type === "function") {
          messages.push({ role: "tool", tool_call_id: call.id, content: `v-${JSON.parse(call.function.arguments).q}` });
        }
      }
      const last = await ask();
      expect(last.choices[0]?.finish_reason).toBe("stop");
      for (const value of ["v-a", "v-b", "v-c"]) expect(last.choices[0]?.message.content).toContain(value);
      expectOneCompletedRun();
    },
  );

  it.each([true, false])(
    "messages (stream: %s): one assistant message with the three tool_use blocks",
    async (stream) => {
      sdk.stack.emulator.resetStats();
      const messages: Anthropic.MessageParam[] = [{ role: "user", content: GAPPED }];
      const ask = () => {
        const body = { model: MODEL, max_tokens: 1024, messages, tools: [messagesTool] };
        return stream ? sdk.anthropic.messages.stream(body).finalMessage() : sdk.anthropic.messages.create(body);
      };
      const first = await ask();
      expect(first.stop_reason).toBe("tool_use");
      expect(toolUses(first).map((use) => (use.input as { q: string }).q)).toEqual(["a", "b", "c"]);
      messages.push(
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: toolUses(first).map((use) => ({
            type: "tool_result" as const,
            tool_use_id: use.id,
            content: `v-${(use.input as { q: string }).q}`,
          })),
        },
      );
      const last = await ask();
      expect(last.stop_reason).toBe("end_turn");
      for (const value of ["v-a", "v-b", "v-c"]) expect(textOf(last)).toContain(value);
      expectOneCompletedRun();
    },
  );

  it("responses: one response with the three function calls", async () => {
    sdk.stack.emulator.resetStats();
    const first = await sdk.openai.responses.create({ model: "auto", input: GAPPED, tools: [responsesTool] });
    const calls = first.output.filter((item) => item.type === "function_call");
    expect(calls.map((call) => JSON.parse(call.arguments).q)).toEqual(["a", "b", "c"]);
    const last = await sdk.openai.responses.create({
      model: "auto",
      previous_response_id: first.id,
      tools: [responsesTool],
      input: calls.map((call) => ({
        type: "function_call_output" as const,
        call_id: call.call_id,
        output: `v-${JSON.parse(call.arguments).q}`,
      })),
    });
    for (const value of ["v-a", "v-b", "v-c"]) expect(last.output_text).toContain(value);
    expectOneCompletedRun();
  });

  it("chat completions with parallel_tool_calls: false: one call per answer, in order, on the one Run", async () => {
    sdk.stack.emulator.resetStats();
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content: GAPPED }];
    const ask = () =>
      sdk.openai.chat.completions
        .stream({ model: "auto", messages, tools: [chatTool], parallel_tool_calls: false })
        .finalChatCompletion();
    const seen: string[] = [];
    for (let round = 0; round < 3; round++) {
      const answer = await ask();
      expect(answer.choices[0]?.finish_reason).toBe("tool_calls");
      const calls = answer.choices[0]?.message.tool_calls ?? [];
      expect(calls).toHaveLength(1);
      const call = calls[0];
      if (call?.type !== "function") throw new Error("expected a function tool call");
      const q = JSON.parse(call.function.arguments).q as string;
      seen.push(q);
      messages.push(answer.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: `v-${q}` });
    }
    expect(seen).toEqual(["a", "b", "c"]);
    const last = await ask();
    expect(last.choices[0]?.finish_reason).toBe("stop");
    for (const value of ["v-a", "v-b", "v-c"]) expect(last.choices[0]?.message.content).toContain(value);
    expectOneCompletedRun();
  });
});

describe("call_count that is not the number of calls the client gets", () => {
  // A stall timeout far longer than the tests: what ends a wait for calls Cursor listed and never sent is the idle
  // period (3 s without progress), not the watchdog.
  const sdk = useSdkStack({ stallTimeoutMs: 600_000 });
  let native: Stack;

  beforeAll(async () => {
    // Cursor's own tools allowed: a native exec the client has no equivalent of is refused by the bridge. No idle
    // period ends a wait here: only the count can end the answer in time.
    native = await startStack({ cursorTools: "native", listedCallsIdleMs: 600_000 });
  });
  afterAll(async () => native?.close());

  it("more listed than sent: once Cursor is idle the calls that came go out, and the turn goes on", async () => {
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `[[emu:tool-count 4]] ${CALLS}` }];
    const body = () => ({ model: MODEL, max_tokens: 1024, messages, tools: [messagesTool] });
    const first = await sdk.anthropic.messages.stream(body()).finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    expect(toolUses(first).map((use) => (use.input as { q: string }).q)).toEqual(["a", "b", "c"]);
    messages.push(
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: toolUses(first).map((use) => ({ type: "tool_result" as const, tool_use_id: use.id, content: "ok" })),
      },
    );
    const last = await sdk.anthropic.messages.stream(body()).finalMessage();
    expect(last.stop_reason).toBe("end_turn");
    expect(textOf(last)).toContain("lookup returned: ok");
  }, 20_000);

  it("fewer listed than sent: the answer ends at the listed calls and the rest come as the next one", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: "user", content: `[[emu:tool-count 2]] ${CALLS}` },
    ];
    const rounds: string[][] = [];
    for (;;) {
      const answer = await sdk.openai.chat.completions.create({ model: "auto", messages, tools: [chatTool] });
      const message = answer.choices[0]?.message;
      if (answer.choices[0]?.finish_reason !== "tool_calls" || message === undefined) break;
      rounds.push(chatQueries(message));
      messages.push(message);
      for (const call of message.tool_calls ?? [])
        messages.push({ role: "tool", tool_call_id: call.id, content: "ok" });
    }
    expect(rounds.flat()).toEqual(["a", "b", "c"]);
    expect(rounds[0]).toEqual(["a", "b"]);
  }, 20_000);

  it("a native call the bridge refuses counts among the listed calls: the client's calls end the answer", async () => {
    const { openai: client } = sdkClients(native.baseURL);
    // The stall timeout (15 s) and idle period are longer than this test: an answer that waited for a fourth call
    // could not pass.
    const ask = `[[emu:tool-gap 300]] [[emu:native read {"path":"/nowhere"}]] ${CALLS}`;
    const answer = await client.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: ask }],
      tools: [chatTool],
    });
    expect(answer.choices[0]?.finish_reason).toBe("tool_calls");
    expect(chatQueries(answer.choices[0]?.message)).toEqual(["a", "b", "c"]);
  }, 10_000);
});

describe("call_count that comes after the step's first call", () => {
  const logLines: string[] = [];
  // Neither the idle period nor the stall watchdog can end a wait within the test's timeout: only the count met can
  // end the answer, so an answer that waited for the idle fallback cannot pass.
  const sdk = useSdkStack({ stallTimeoutMs: 600_000, listedCallsIdleMs: 600_000, logLines });

  // Two steps of two calls each; every step's tool_requests_listed comes after its first call, with the second call
  // at once or after a gap far past the batch window.
  const TWO_STEPS =
    '[[emu:tool-listed-after 1]] [[emu:tool lookup {"q":"a"}]] [[emu:tool lookup {"q":"b"}]] [[emu:then]] ' +
    '[[emu:tool lookup {"q":"c"}]] [[emu:tool lookup {"q":"d"}]]';

  it.each([
    { gap: "no gap", stream: true },
    { gap: "[[emu:tool-gap 300]]", stream: false },
  ])(
    "chat completions ($gap, stream: $stream): each step's two calls come as one assistant message",
    async ({ gap, stream }) => {
      sdk.stack.emulator.resetStats();
      logLines.length = 0;
      const content = gap === "no gap" ? TWO_STEPS : `${gap} ${TWO_STEPS}`;
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: "user", content }];
      const ask = () =>
        stream
          ? sdk.openai.chat.completions.stream({ model: "auto", messages, tools: [chatTool] }).finalChatCompletion()
          : sdk.openai.chat.completions.create({ model: "auto", messages, tools: [chatTool] });
      const rounds: string[][] = [];
      for (;;) {
        const answer = await ask();
        const message = answer.choices[0]?.message;
        if (answer.choices[0]?.finish_reason !== "tool_calls" || message === undefined) {
          for (const value of ["v-a", "v-b", "v-c", "v-d"]) expect(message?.content).toContain(value);
          break;
        }
        rounds.push(chatQueries(message));
        messages.push(message);
        for (const call of message.tool_calls ?? []) {
          if (call.type === "function") {
            messages.push({
              role: "tool",
              tool_call_id: call.id,
              content: `v-${JSON.parse(call.function.arguments).q}`,
            });
          }
        }
      }
      expect(rounds).toEqual([
        ["a", "b"],
        ["c", "d"],
      ]);
      expect(logLines.filter((line) => line.includes("listed more tool calls"))).toEqual([]);
      const stats = sdk.stack.emulator.stats();
      expect(stats.runStreams + stats.runSseStreams).toBe(1);
      expect(stats.turns.map((turn) => turn.outcome)).toEqual(["completed"]);
    },
    10_000,
  );
});
