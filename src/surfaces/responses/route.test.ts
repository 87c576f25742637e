import { describe, expect, it } from "vitest";
import { testAppOptions } from "../../../test/support/app-options.js";
import type { BackendEvent, ModelInfo } from "../../backend/types.js";
import type { Engine, EngineRequest } from "../../engine/index.js";
import { createApp } from "../../server/app.js";
import { createMemoryResponseStore } from "../../stores/memory/response-store.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";

const MODEL: ModelInfo = {
  id: "default",
  displayName: "Auto",
  aliases: [],
  reasoning: false,
  maxMode: false,
  vision: false,
};

type Script = (request: EngineRequest) => (BackendEvent | Error)[] | Error;

/** A small in-test engine: answers every turn from a script, records requests and whether each turn was abandoned. */
function scriptedEngine(script: Script): Engine & { requests: EngineRequest[]; signals: AbortSignal[] } {
  const requests: EngineRequest[] = [];
  const signals: AbortSignal[] = [];
  return {
    requests,
    signals,
    listModels: async () => [MODEL],
    async startTurn(request, signal) {
      requests.push(structuredClone(request));
      signals.push(signal);
      const result = script(request);
      if (result instanceof Error) throw result;
      return {
        route: requests.length === 1 ? "new" : "continued",
        model: MODEL,
        events: (async function* () {
          for (const event of result) {
            if (event instanceof Error) throw event;
            yield event;
          }
        })(),
      };
    },
  };
}

const HELLO: BackendEvent[] = [
  { type: "text-delta", text: "Hello" },
  { type: "usage", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
  { type: "turn-end", reason: "stop" },
];

function appWith(script: Script = () => HELLO) {
  return appWithEngine(scriptedEngine(script));
}

function appWithEngine<E extends Engine>(engine: E) {
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (message, fields) => warnings.push(`${message} ${String(fields?.error)}`),
    error: (message, fields) => warnings.push(`${message} ${String(fields?.error)}`),
    child: () => logger,
  };
  const now = () => 1_767_225_600_000;
  const store = createMemoryResponseStore({ now });
  let id = 0;
  const app = createApp({
    engine: { ...engine, parkedCount: () => 0, closeAll: async () => {} },
    responseStore: store,
    logger,
    options: testAppOptions({ maxBodyBytes: 1 << 20, version: "0.0.0-test" }),
    now,
    newId: () => `id${++id}`,
  });
  const post = (body: unknown) =>
    app.request("/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { app, engine, store, post, warnings };
}

function sseEvents(text: string): { type: string; sequence_number: number; [key: string]: unknown }[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => JSON.parse(frame.split("\n")[1]?.slice("data: ".length) ?? "null"));
}

describe("POST /v1/responses", () => {
  it("answers a non-streaming request with a stored response object that GET returns and DELETE removes", async () => {
    const { app, post } = appWith();
    const res = await post({ model: "default", input: "hi", instructions: "Be brief." });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; status: string; output: unknown[]; usage: unknown };
    expect(body.id).toMatch(/^resp_id\d+$/);
    expect(body).toMatchObject({
      object: "response",
      status: "completed",
      instructions: "Be brief.",
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello" }] }],
      usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
    });
    const got = await app.request(`/v1/responses/${body.id}`);
    expect(await got.json()).toEqual(body);
    const deleted = await app.request(`/v1/responses/${body.id}`, { method: "DELETE" });
    expect(await deleted.json()).toEqual({ id: body.id, object: "response", deleted: true });
    const gone = await app.request(`/v1/responses/${body.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ error: { type: "not_found_error" } });
  });

  it("streams numbered events and hands the engine the neutral request", async () => {
    const { engine, post } = appWith();
    const res = await post({
      model: "default",
      stream: true,
      store: false,
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      ],
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = sseEvents(await res.text());
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(engine.requests[0]).toEqual({
      model: "default",
      instructions: [],
      messages: [
        { role: "system", text: "rules" },
        { role: "user", parts: [{ type: "text", text: "hi" }] },
      ],
      tools: [],
      options: { reasoning: true, reasoningEffort: undefined, toolChoice: "auto" },
    });
  });

  it("continues from previous_response_id with the whole stored history; store:false is never kept", async () => {
    const { app, engine, post, warnings } = appWith((request) =>
      request.messages.length === 1
        ? [
            { type: "tool-call", toolCallId: "call_1", toolName: "get_weather", arguments: '{"city":"Paris"}' },
            { type: "turn-end", reason: "tool-calls" },
          ]
        : HELLO,
    );
    const tools = [{ type: "function", name: "get_weather", parameters: { type: "object" } }];
    const first = (await (await post({ model: "default", input: "weather?", tools })).json()) as { id: string };
    expect(warnings).toEqual([]);
    const second = await post({
      model: "default",
      previous_response_id: first.id,
      tools,
      store: false,
      input: [{ type: "function_call_output", call_id: "call_1", output: "sunny" }],
    });
    expect(second.status).toBe(200);
    expect(engine.requests[1]?.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        text: "",
        reasoning: [],
        toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }],
      },
      { role: "tool", toolCallId: "call_1", content: "sunny", isError: false, param: "input[0].call_id" },
    ]);
    const secondId = ((await second.json()) as { id: string }).id;
    expect((await app.request(`/v1/responses/${secondId}`)).status).toBe(404);
  });

  it("an unknown previous_response_id is a 400 previous_response_not_found naming the param", async () => {
    const { engine, post } = appWith();
    const res = await post({ model: "default", input: "x", previous_response_id: "resp_nope" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: "Previous response with id 'resp_nope' not found.",
        type: "invalid_request_error",
        param: "previous_response_id",
        code: "previous_response_not_found",
      },
    });
    expect(engine.requests).toHaveLength(0);
  });

  it("drops built-in tools with a warning header and lists parameters it cannot honour", async () => {
    const { engine, post } = appWith();
    const res = await post({
      model: "default",
      input: "x",
      tools: [{ type: "file_search" }, { type: "web_search" }, { type: "custom", name: "apply_patch" }],
      temperature: 0.1,
      prompt_cache_key: "abc",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-cursor-bridge-warnings")).toBe(
      "built-in tools the bridge cannot run were dropped: file_search",
    );
    expect(engine.requests[0]?.serverTools).toEqual({ webSearch: {}, webFetch: {} });
    expect(res.headers.get("x-cursor-bridge-ignored-params")).toBe("temperature,prompt_cache_key");
    expect(engine.requests[0]?.tools.map((tool) => tool.name)).toEqual(["apply_patch"]);
  });

  it("early engine failures are OpenAI-shaped HTTP errors; bad bodies name the field", async () => {
    const { post } = appWith(
      () => new ProxyError("not_found", "The model `x` does not exist.", { param: "model", detail: "model_not_found" }),
    );
    const missing = await post({ model: "x", input: "hi" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "model_not_found", param: "model" } });
    const notJson = await post("{");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ error: { param: "body", type: "invalid_request_error" } });
    const badItem = await post({ model: "x", input: [{ type: "function_call_output", output: "x" }] });
    expect(await badItem.json()).toMatchObject({ error: { param: "input[0].call_id" } });
    // A parameter the bridge ignores still gets OpenAI's type check, in OpenAI's error shape.
    const hot = await post({ model: "x", input: "hi", temperature: "hot" });
    expect(hot.status).toBe(400);
    expect(await hot.json()).toEqual({
      error: {
        message: "Invalid type for 'temperature': expected number, but got a string.",
        type: "invalid_request_error",
        param: "temperature",
        code: null,
      },
    });
    const noSchema = await post({ model: "x", input: "hi", text: { format: { type: "json_schema", name: "a" } } });
    expect(noSchema.status).toBe(400);
    expect(await noSchema.json()).toMatchObject({ error: { param: "text.format.schema" } });
  });

  it("a short Cursor rate limit is a 429 with its Retry-After, OpenAI-shaped", async () => {
    const { post } = appWith(
      () => new ProxyError("rate_limited", "Cursor rate limit reached.", { retryAfterSeconds: 30 }),
    );
    const res = await post({ model: "default", input: "hi", stream: true });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("30");
    expect(await res.json()).toMatchObject({ error: { type: "rate_limit_error", code: "rate_limit_exceeded" } });
  });

  it("a failure mid-stream ends with error + response.failed and stores nothing", async () => {
    const { app, post } = appWith(() => [
      { type: "text-delta", text: "Par" },
      new ProxyError("backend_unavailable", "The Cursor stream closed unexpectedly."),
    ]);
    const res = await post({ model: "default", input: "hi", stream: true });
    const events = sseEvents(await res.text());
    expect(events.slice(-2)).toMatchObject([
      { type: "error", code: "upstream_unavailable", message: "The Cursor stream closed unexpectedly." },
      { type: "response.failed", response: { status: "failed" } },
    ]);
    // The text streamed before the failure stays in the final object, its message marked incomplete.
    expect((events.at(-1)?.response as { output?: unknown[] } | undefined)?.output).toMatchObject([
      { type: "message", status: "incomplete", content: [{ type: "output_text", text: "Par" }] },
    ]);
    const id = (events.at(-1)?.response as { id: string } | undefined)?.id;
    expect(id).toMatch(/^resp_/);
    expect((await app.request(`/v1/responses/${id}`)).status).toBe(404);
  });

  it("a client that goes away aborts the engine turn and releases its events", async () => {
    const signals: AbortSignal[] = [];
    let returned = false;
    const pending = new Promise<IteratorResult<BackendEvent>>(() => {});
    const slow: Engine = {
      listModels: async () => [MODEL],
      async startTurn(_request, signal) {
        signals.push(signal);
        let first = true;
        const iterator: AsyncIterator<BackendEvent> = {
          next: () => {
            if (!first) return pending;
            first = false;
            return Promise.resolve({ done: false, value: { type: "text-delta", text: "a" } });
          },
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
        return { route: "new", model: MODEL, events: { [Symbol.asyncIterator]: () => iterator } };
      },
    };
    const { post } = appWithEngine(slow);
    const res = await post({ model: "default", input: "hi", stream: true });
    const reader = res.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    expect(signals[0]?.aborted).toBe(true);
    expect(returned).toBe(true);
  });
});
