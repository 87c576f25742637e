/**
 * How long a parked turn is held (docs/architecture.md, parked turns): not a moment longer than it can be resumed.
 * A turn whose Run dies while parked, or whose call Cursor closes on its own, leaves `/health`'s count at once, and
 * the client's results then continue the conversation from the checkpoint it parked with; a request that answers a
 * parked turn only in part closes it. Through real HTTP against the emulator.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { type Stack, startStack } from "../support/stack.js";

const weather: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const stacks: Stack[] = [];
const emulators: Emulator[] = [];
afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.close();
  for (const emulator of emulators.splice(0)) await emulator.close();
});

/** Polls `check` for up to 15 s (a loaded machine), then asserts it. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(await check()).toBe(true);
}

async function parkedOnHealth(stack: Stack): Promise<number> {
  const health = (await (await fetch(`${stack.baseURL.replace(/\/v1$/, "")}/health`)).json()) as {
    parked_turns: number;
  };
  return health.parked_turns;
}

async function setUp(existingEmulator?: Emulator) {
  const lines: string[] = [];
  const stack = await startStack(
    existingEmulator === undefined ? { logLines: lines } : { logLines: lines, existingEmulator },
  );
  stacks.push(stack);
  const client = new OpenAI({ baseURL: stack.baseURL, apiKey: "local", maxRetries: 0 });
  const routes = () => lines.flatMap((line) => /POST \/v1\/chat\/completions 200.*turn=(\w+)/.exec(line)?.[1] ?? []);
  return { stack, client, lines, routes };
}

describe("a parked turn's lifetime", () => {
  it("ends when its Run dies while parked: /health stops counting it at once", async () => {
    const emulator = await startEmulator({ port: 0, heartbeatIntervalMs: 200 });
    emulators.push(emulator);
    const { stack, client } = await setUp(emulator);
    const messages: ChatMessage[] = [{ role: "user", content: 'Weather? [[emu:tool get_weather {"city":"Oslo"}]]' }];
    await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    expect(await parkedOnHealth(stack)).toBe(1);
    // Cursor goes away: every Run stream fails. The park TTL is a minute here; the count drops long before.
    await emulator.close();
    await eventually(async () => (await parkedOnHealth(stack)) === 0);
    expect(stack.parked.size()).toBe(0);
  });

  it("ends when Cursor closes the call while parked: the late result continues from the checkpoint", async () => {
    const { stack, client, routes, lines } = await setUp();
    const messages: ChatMessage[] = [
      { role: "user", content: 'Weather? [[emu:tool get_weather {"city":"Oslo"}]] [[emu:abort-exec 500]]' },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(stack.parked.size()).toBe(1);
    await eventually(() => stack.parked.size() === 0);
    expect(lines.some((line) => line.includes("Parked turn ended upstream"))).toBe(true);
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "sunny" });
    const reply = await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    const text = reply.choices[0]?.message.content ?? "";
    expect(text).toContain("get_weather returned: sunny");
    expect(text).not.toContain("aborted by the server");
    expect(routes()).toEqual(["new", "continued"]);
  });

  it("is closed by a request that answers only some of its calls", async () => {
    const { stack, client, routes } = await setUp();
    const messages: ChatMessage[] = [
      {
        role: "user",
        content: 'Both [[emu:tool get_weather {"city":"Oslo"}]] [[emu:tool get_weather {"city":"Rome"}]]',
      },
    ];
    const first = await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    const calls = first.choices[0]!.message.tool_calls!;
    expect(calls).toHaveLength(2);
    expect(stack.parked.size()).toBe(1);
    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: calls[0]!.id, content: "sunny" });
    await client.chat.completions.create({ model: "auto", messages, tools: [weather] });
    expect(routes()).toEqual(["new", "continued"]);
    expect(stack.parked.size()).toBe(0);
  });
});
