/**
 * Usage from Cursor's own `turn_ended` counts and the model that served `auto` (cursor-protocol-addendum-2.md §3,
 * §4), on every surface, streamed and not, against the emulator. The emulator's counts follow the formulas of
 * docs/emulator.md's token counts: for the message below U = 3 ("how many tokens"), so input = 3, cache write = 3,
 * cache read = 40 ([[emu:cached 40]]), reasoning = 7 ([[emu:think 7]]), output = 5 text + 7 reasoning = 12.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../support/stack.js";

const MESSAGE = "how many tokens [[emu:think 7]] [[emu:cached 40]] [[emu:tokens 5]]";
const SERVED = "composer-1.5";
/** Every prompt token: 3 uncached + 40 read from the cache + 3 written to it. */
const PROMPT = 3 + 40 + 3;
const OUTPUT = 12;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack.close());

async function post(path: string, body: unknown): Promise<Response> {
  const response = await fetch(`${stack.baseURL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer local", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response;
}

/** The JSON payloads of an SSE body. */
async function sseData(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

describe("OpenAI chat completions", () => {
  const usage = {
    prompt_tokens: PROMPT,
    completion_tokens: OUTPUT,
    total_tokens: PROMPT + OUTPUT,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 7 },
  };

  it("reports Cursor's counts and names the served model (non-streaming)", async () => {
    const body = await post("/chat/completions", { model: "auto", messages: [{ role: "user", content: MESSAGE }] });
    const completion = (await body.json()) as {
      model: string;
      usage: unknown;
      choices: { message: { content: string } }[];
    };
    expect(completion.choices[0]?.message.content).toBe("alpha bravo charlie delta echo");
    expect(completion.model).toBe(SERVED);
    expect(completion.usage).toEqual(usage);
  });

  it("reports them in the usage chunk and names the model in every chunk (streaming)", async () => {
    const chunks = await sseData(
      await post("/chat/completions", {
        model: "auto",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: MESSAGE }],
      }),
    );
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.model).toBe(SERVED);
    expect(chunks.at(-1)?.usage).toEqual(usage);
  });

  it("a response that ends on tool calls reports what is known; the one ending the turn the rest of Cursor's counts", async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }];
    const messages: unknown[] = [{ role: "user", content: 'find it [[emu:tool lookup {"q":1}]] [[emu:cached 9]]' }];
    const first = (await (await post("/chat/completions", { model: "auto", messages, tools })).json()) as {
      choices: { finish_reason: string; message: { tool_calls: { id: string }[] } }[];
      usage: Record<string, unknown>;
    };
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    // Estimated: output from the stream (ceil(9 chars of {"q":1} / 4) = 2), the input by the request's estimate (no
    // checkpoint told the context size yet), no Cursor breakdown yet.
    const prompt = first.usage.prompt_tokens as number;
    expect(prompt).toBeGreaterThan(0);
    expect(first.usage).toEqual({ prompt_tokens: prompt, completion_tokens: 2, total_tokens: prompt + 2 });
    const call = first.choices[0]?.message.tool_calls[0];
    messages.push(first.choices[0]?.message, { role: "tool", tool_call_id: call?.id, content: "found" });
    const second = (await (await post("/chat/completions", { model: "auto", messages, tools })).json()) as {
      model: string;
      usage: unknown;
    };
    // The whole turn: U = 2 ("find it"), input 2 + 9 + 2; output = 2 (the call's arguments) + 3 ("lookup returned:
    // found"). The first response reported `prompt` and 2 of them: this one reports the rest (never below 0), its
    // cache reads no more than its input (docs/api.md).
    const input = Math.max(0, 2 + 9 + 2 - prompt);
    expect(second.model).toBe(SERVED);
    expect(second.usage).toEqual({
      prompt_tokens: input,
      completion_tokens: 3,
      total_tokens: input + 3,
      prompt_tokens_details: { cached_tokens: Math.min(9, input) },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it("a request for a concrete model keeps its name (no routed_model is sent)", async () => {
    const body = await post("/chat/completions", { model: "composer-2", messages: [{ role: "user", content: "hi" }] });
    expect(((await body.json()) as { model: string }).model).toBe("composer-2");
  });
});

describe("Anthropic messages", () => {
  const usage = {
    input_tokens: 3,
    output_tokens: OUTPUT,
    cache_read_input_tokens: 40,
    cache_creation_input_tokens: 3,
  };

  it("reports Cursor's counts in Anthropic's split and names the served model (non-streaming)", async () => {
    const body = await post("/messages", {
      model: "auto",
      max_tokens: 100,
      messages: [{ role: "user", content: MESSAGE }],
    });
    const message = (await body.json()) as { model: string; usage: unknown };
    expect(message.model).toBe(SERVED);
    expect(message.usage).toEqual(usage);
  });

  it("streams message_start with the served model and message_delta with the counts", async () => {
    const events = await sseData(
      await post("/messages", {
        model: "auto",
        max_tokens: 100,
        stream: true,
        messages: [{ role: "user", content: MESSAGE }],
      }),
    );
    const start = events.find((event) => event.type === "message_start") as { message: { model: string } };
    expect(start.message.model).toBe(SERVED);
    const delta = events.find((event) => event.type === "message_delta") as { usage: unknown };
    expect(delta.usage).toEqual(usage);
  });
});

describe("OpenAI Responses", () => {
  const usage = {
    input_tokens: PROMPT,
    input_tokens_details: { cached_tokens: 40 },
    output_tokens: OUTPUT,
    output_tokens_details: { reasoning_tokens: 7 },
    total_tokens: PROMPT + OUTPUT,
  };

  it("reports Cursor's counts and names the served model (non-streaming)", async () => {
    const body = await post("/responses", { model: "auto", input: MESSAGE, store: false });
    const response = (await body.json()) as { model: string; usage: unknown };
    expect(response.model).toBe(SERVED);
    expect(response.usage).toEqual(usage);
  });

  it("streams response.completed with the counts and the served model", async () => {
    const events = await sseData(
      await post("/responses", { model: "auto", input: MESSAGE, stream: true, store: false }),
    );
    const created = events.find((event) => event.type === "response.created") as { response: { model: string } };
    expect(created.response.model).toBe(SERVED);
    const completed = events.find((event) => event.type === "response.completed") as {
      response: { model: string; usage: unknown };
    };
    expect(completed.response.model).toBe(SERVED);
    expect(completed.response.usage).toEqual(usage);
  });
});
