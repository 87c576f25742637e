/**
 * The real `openai` SDK's Responses client (`client.responses.create`, `client.responses.stream`) against the
 * `/v1/responses` surface over HTTP. The engine here is a small scripted stand-in that answers like the emulator's
 * scripted model (`You said: …`, `[[emu:tool NAME {args}]]` → a call, then `NAME returned: …`), so this pins the wire
 * compatibility of the surface itself; the end-to-end tests run the same flows on the real engine and emulator.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BackendEvent, ModelInfo } from "../../src/backend/types.js";
import type { BridgeEngine, EngineRequest } from "../../src/engine/index.js";
import { createApp } from "../../src/server/app.js";
import { listen, type RunningServer } from "../../src/server/listen.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import { ProxyError } from "../../src/util/errors.js";
import { silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "../support/app-options.js";

const MODEL: ModelInfo = {
  id: "default",
  displayName: "Auto",
  aliases: ["auto"],
  reasoning: true,
  maxMode: false,
  vision: false,
};

/** The emulator's echo and tool directives, enough to drive a client through a tool round trip. */
function scriptedTurn(request: EngineRequest): BackendEvent[] {
  const last = request.messages.at(-1);
  const events: BackendEvent[] = [];
  if (last?.role === "tool") {
    const results = request.messages.filter((m) => m.role === "tool").map((m) => `returned: ${m.content}`);
    events.push({ type: "text-delta", text: `lookup ${results.at(-1)}` });
  } else if (last?.role === "user") {
    const text = last.parts.map((part) => (part.type === "text" ? part.text : `[image ${part.mimeType}]`)).join(" ");
    const tool = /\[\[emu:tool (\S+) (\{.*\})\]\]/.exec(text);
    if (text.includes("[[emu:think")) {
      events.push({ type: "reasoning-delta", text: "Let me think." }, { type: "reasoning-end", durationMs: 5 });
    }
    if (tool !== null) {
      events.push({ type: "tool-call", toolCallId: "call_1", toolName: tool[1] ?? "", arguments: tool[2] ?? "{}" });
      events.push({ type: "turn-end", reason: "tool-calls" });
      return events;
    }
    events.push({ type: "text-delta", text: "You said: " }, { type: "text-delta", text });
  }
  events.push({ type: "usage", usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 } });
  events.push({ type: "turn-end", reason: "stop" });
  return events;
}

describe("openai SDK responses client against /v1/responses", () => {
  const requests: EngineRequest[] = [];
  let server: RunningServer;
  let client: OpenAI;

  beforeAll(async () => {
    const engine: BridgeEngine = {
      parkedCount: () => 0,
      closeAll: async () => {},
      listModels: async () => [MODEL],
      async startTurn(request) {
        requests.push(request);
        if (request.model !== "default" && request.model !== "auto") {
          throw new ProxyError("not_found", `The model \`${request.model}\` does not exist.`, {
            param: "model",
            detail: "model_not_found",
          });
        }
        const events = scriptedTurn(request);
        return {
          route: "new",
          model: MODEL,
          events: (async function* () {
            yield* events;
          })(),
        };
      },
    };
    let id = 0;
    const app = createApp({
      engine,
      responseStore: createMemoryResponseStore(),
      logger: silentLogger,
      options: testAppOptions({ version: "0.0.0-test" }),
      now: Date.now,
      newId: () => `sdk${++id}`,
    });
    server = await listen(app, { host: "127.0.0.1", port: 0, apiKey: undefined });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "local", maxRetries: 0 });
  });
  afterAll(async () => server?.close());

  it("non-streaming: output_text, usage and a stored response the SDK can retrieve and delete", async () => {
    const response = await client.responses.create({ model: "auto", input: "Hello there" });
    expect(response.output_text).toBe("You said: Hello there");
    expect(response.status).toBe("completed");
    expect(response.usage?.total_tokens).toBe(14);
    expect((await client.responses.retrieve(response.id)).output_text).toBe("You said: Hello there");
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("lists a stored response's input items, the previous_response_id chain's included, in the SDK's pages", async () => {
    const first = await client.responses.create({ model: "auto", input: "First question", instructions: "Be brief." });
    const second = await client.responses.create({
      model: "auto",
      previous_response_id: first.id,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Second question" }] }],
    });
    const all: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of client.responses.inputItems.list(second.id, { order: "asc", limit: 1 })) all.push(item);
    // The first request's input, its answer, then the second input: each with an id and text parts.
    expect(all.map((item) => item.type)).toEqual(["message", "message", "message"]);
    expect(all.map((item) => (item.type === "message" ? item.role : ""))).toEqual(["user", "assistant", "user"]);
    expect(all[0]).toMatchObject({ content: [{ type: "input_text", text: "First question" }] });
    expect(all[1]?.id).toBe(first.output[0]?.id);
    expect(new Set(all.map((item) => item.id)).size).toBe(3);
    const newest = await client.responses.inputItems.list(second.id);
    expect(newest.data.map((item) => item.id)).toEqual(all.map((item) => item.id).reverse());
    expect(newest.has_more).toBe(false);
    const page = await client.responses.inputItems.list(second.id, { order: "asc", limit: 2 });
    expect(page.data.map((item) => item.id)).toEqual(all.slice(0, 2).map((item) => item.id));
    expect(page.has_more).toBe(true);
    await expect(client.responses.inputItems.list("resp_unknown")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.inputItems.list(second.id, { limit: 500 })).rejects.toMatchObject({
      status: 400,
      param: "limit",
    });
  });

  it("offers only the tools an allowed_tools tool_choice lists", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "lookup", strict: false, parameters: { type: "object", properties: {} } },
      { type: "function", name: "other", strict: false, parameters: { type: "object", properties: {} } },
      { type: "custom", name: "patch" },
    ];
    const { response } = await client.responses
      .create({
        model: "auto",
        tools,
        tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "lookup" }] },
        input: "Which tools?",
      })
      .withResponse();
    expect(requests.at(-1)?.tools.map((tool) => tool.name)).toEqual(["lookup"]);
    expect(requests.at(-1)?.options.toolChoice).toBe("required");
    expect(response.headers.get("x-cursor-bridge-warnings") ?? "").not.toContain("allowed_tools");
    const unknown = client.responses.create({
      model: "auto",
      tools,
      tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "nope" }] },
      input: "x",
    });
    await expect(unknown).rejects.toMatchObject({ status: 400, param: "tool_choice.tools[0].name" });
  });

  it("streaming: the SDK's stream helper accumulates the deltas into the final response", async () => {
    const stream = client.responses.stream({ model: "auto", input: "Stream me" });
    const types: string[] = [];
    let text = "";
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe("You said: Stream me");
    expect(final.output_text).toBe("You said: Stream me");
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
  });

  it("a function tool round trip with previous_response_id", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      {
        type: "function",
        name: "lookup",
        strict: false,
        parameters: { type: "object", properties: { q: { type: "string" } } },
      },
    ];
    const first = await client.responses.create({
      model: "auto",
      tools,
      input: 'Find it [[emu:tool lookup {"q":"x"}]]',
    });
    const call = first.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "lookup", arguments: '{"q":"x"}' });
    const second = await client.responses.create({
      model: "auto",
      tools,
      previous_response_id: first.id,
      input: [
        { type: "function_call_output", call_id: call?.type === "function_call" ? call.call_id : "", output: "42" },
      ],
    });
    expect(second.output_text).toBe("lookup returned: 42");
    expect(requests.at(-1)?.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("a function tool round trip with store:false and the whole history re-sent (Codex style)", async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: "function", name: "lookup", strict: false, parameters: {} }];
    const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: 'Go [[emu:tool lookup {"q":"y"}]]' }];
    const stream = await client.responses.create({ model: "auto", tools, input, store: false, stream: true });
    const items: OpenAI.Responses.ResponseOutputItem[] = [];
    for await (const event of stream) if (event.type === "response.output_item.done") items.push(event.item);
    const call = items.find((item) => item.type === "function_call");
    if (call?.type !== "function_call") throw new Error("no function call streamed");
    const second = await client.responses.create({
      model: "auto",
      tools,
      store: false,
      input: [
        ...input,
        ...(items as OpenAI.Responses.ResponseInputItem[]),
        { type: "function_call_output", call_id: call.call_id, output: "7" },
      ],
    });
    expect(second.output_text).toBe("lookup returned: 7");
    await expect(client.responses.retrieve(second.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("reasoning: the bridge's encrypted_content comes back and is recognised; a foreign one is ignored", async () => {
    const first = await client.responses.create({
      model: "auto",
      input: "Think [[emu:think 3]]",
      reasoning: { effort: "medium", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      store: false,
    });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    if (reasoning?.type !== "reasoning") throw new Error("no reasoning item");
    expect(reasoning.summary[0]?.text).toBe("Let me think.");
    expect(reasoning.encrypted_content).toMatch(/^cbr1\./);
    await client.responses.create({
      model: "auto",
      store: false,
      input: [
        { role: "user", content: "Think [[emu:think 3]]" },
        reasoning,
        { type: "reasoning", id: "rs_foreign", summary: [], encrypted_content: "gAAAA-foreign" },
        ...(first.output.filter((item) => item.type === "message") as OpenAI.Responses.ResponseInputItem[]),
        { role: "user", content: "again" },
      ],
    });
    const assistant = requests.at(-1)?.messages.find((m) => m.role === "assistant");
    expect(assistant?.role === "assistant" && assistant.reasoning).toEqual([
      { text: "Let me think.", opaque: reasoning.encrypted_content },
      { text: "" },
    ]);
  });

  it("an image input arrives as raw bytes", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const response = await client.responses.create({
      model: "auto",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "What is this?" },
            { type: "input_image", detail: "auto", image_url: `data:image/png;base64,${png.toString("base64")}` },
          ],
        },
      ],
    });
    expect(response.output_text).toBe("You said: What is this? [image image/png]");
    const user = requests.at(-1)?.messages.at(-1);
    expect(user?.role === "user" && user.parts[1]).toEqual({
      type: "image",
      mimeType: "image/png",
      data: new Uint8Array(png),
    });
  });

  it("errors arrive as the SDK's typed errors with code and param", async () => {
    const notFound = await client.responses
      .create({ model: "auto", input: "x", previous_response_id: "resp_missing" })
      .catch((e) => e);
    expect(notFound).toBeInstanceOf(OpenAI.BadRequestError);
    expect(notFound).toMatchObject({ status: 400, code: "previous_response_not_found", param: "previous_response_id" });
    const model = await client.responses.create({ model: "nope", input: "x" }).catch((e) => e);
    expect(model).toBeInstanceOf(OpenAI.NotFoundError);
    expect(model).toMatchObject({ code: "model_not_found" });
    const badImage = await client.responses
      .create({
        model: "auto",
        input: [
          { role: "user", content: [{ type: "input_image", detail: "auto", image_url: "https://example.com/a.png" }] },
        ],
      })
      .catch((e) => e);
    expect(badImage).toMatchObject({ status: 400, param: "input[0].content[0].image_url" });
  });
});
