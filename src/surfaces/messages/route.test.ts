/**
 * The Anthropic surface's HTTP edge, driven by a small in-test Engine that replays BackendEvent fixtures (the real
 * engine and emulator are covered end to end in test/e2e/anthropic-sdk.test.ts).
 */
import { describe, expect, it } from "vitest";
import { testAppOptions } from "../../../test/support/app-options.js";
import type { BackendEvent, ModelInfo } from "../../backend/types.js";
import { createClusterAuth, deriveKey } from "../../cluster/cluster-auth.js";
import type { BridgeEngine, EngineRequest, EngineTurn } from "../../engine/index.js";
import { createApp } from "../../server/app.js";
import { ProxyError } from "../../util/errors.js";
import { silentLogger } from "../../util/logger.js";
import type { AppOptions } from "../kit/deps.js";

const MODELS: ModelInfo[] = [
  { id: "claude-4.5-sonnet", displayName: "Sonnet 4.5", aliases: [], reasoning: true, maxMode: false, vision: false },
];

/** Replays `script(request)` as the turn's events; records requests and whether each turn was released. */
function fixtureEngine(script: (request: EngineRequest) => BackendEvent[] | Error | "hang") {
  const requests: EngineRequest[] = [];
  const released: boolean[] = [];
  const engine: BridgeEngine = {
    listModels: async () => MODELS,
    parkedCount: () => 0,
    closeAll: async () => {},
    async startTurn(request, signal): Promise<EngineTurn> {
      requests.push(request);
      const result = script(request);
      if (result instanceof Error) throw result;
      const slot = released.push(false) - 1;
      async function* events(): AsyncGenerator<BackendEvent> {
        try {
          if (result === "hang") {
            yield { type: "text-delta", text: "thinking about it" };
            await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
          } else {
            yield* result as BackendEvent[];
          }
        } finally {
          released[slot] = true;
        }
      }
      return { route: "new", model: MODELS[0] as ModelInfo, events: await started(events()) };
    },
  };
  return { engine, requests, released };
}

/** Like the real engine: the turn's first event has arrived before startTurn resolves. */
async function started(source: AsyncGenerator<BackendEvent>): Promise<AsyncIterable<BackendEvent>> {
  const first = await source.next();
  let replayed = false;
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        if (replayed) return source.next();
        replayed = true;
        return Promise.resolve(first);
      },
      return: () => source.return(undefined),
    }),
  };
}

const BASE_OPTIONS: AppOptions = testAppOptions({ maxBodyBytes: 64 * 1024, version: "0.0.0-test" });

function appWith(engine: BridgeEngine, options: Partial<AppOptions> = {}) {
  return createApp({
    engine,
    logger: silentLogger,
    options: { ...BASE_OPTIONS, ...options },
    now: () => 1_700_000_000_000,
    newId: () => "id1",
  });
}

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

const BASE = { model: "claude-sonnet-5-5", max_tokens: 512 };
const TEXT: BackendEvent[] = [
  { type: "text-delta", text: "Hello" },
  { type: "usage", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } },
  { type: "turn-end", reason: "stop" },
];

describe("POST /v1/messages", () => {
  it("streams Anthropic events and hands the engine instructions, not user text, for system messages", async () => {
    const { engine, requests, released } = fixtureEngine(() => TEXT);
    const res = await appWith(engine).request(
      "/v1/messages?beta=true",
      post({
        ...BASE,
        stream: true,
        system: "top",
        temperature: 0.2,
        messages: [
          { role: "user", content: "hi" },
          { role: "system", content: "reminder" },
        ],
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("x-cursor-bridge-ignored-params")).toBe("temperature");
    const text = await res.text();
    expect([...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1])).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(text).toContain('"id":"msg_id1"');
    expect(text).toContain('"usage":{"input_tokens":3,"output_tokens":1}');
    expect(text).toContain('"model":"claude-4.5-sonnet"');
    expect(requests[0]).toMatchObject({
      // Claude Code's Anthropic id resolves by family to the Sonnet the upstream lists.
      model: "claude-4.5-sonnet",
      instructions: ["top"],
      messages: [
        { role: "user", parts: [{ type: "text", text: "hi" }] },
        { role: "system", text: "reminder" },
      ],
    });
    expect(released).toEqual([true]);
  });

  it("answers one message object when not streaming", async () => {
    const { engine } = fixtureEngine(() => [
      { type: "tool-call", toolCallId: "c9", toolName: "Bash", arguments: '{"command":"pwd"}' },
      { type: "turn-end", reason: "tool-calls" },
    ]);
    const res = await appWith(engine).request(
      "/v1/messages",
      post({ ...BASE, messages: [{ role: "user", content: "x" }] }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: "msg_id1",
      type: "message",
      content: [{ type: "tool_use", id: "toolu_c9", name: "Bash", input: { command: "pwd" } }],
      stop_reason: "tool_use",
    });
  });

  it("signs thinking with the server's HMAC", async () => {
    const { engine } = fixtureEngine(() => [
      { type: "reasoning-delta", text: "hmm" },
      { type: "text-delta", text: "ok" },
      { type: "turn-end", reason: "stop" },
    ]);
    const body = { ...BASE, thinking: { type: "adaptive" }, messages: [{ role: "user", content: "x" }] };
    const message = (await (await appWith(engine).request("/v1/messages", post(body))).json()) as {
      content: Array<{ type: string; signature?: string }>;
    };
    expect(message.content[0]?.type).toBe("thinking");
    expect(message.content[0]?.signature).toMatch(/^cb1\.[A-Za-z0-9_-]{43}$/);
  });

  it("signs thinking with a key from the cluster secret: every instance issues the same signature", async () => {
    const events: BackendEvent[] = [
      { type: "reasoning-delta", text: "hmm" },
      { type: "text-delta", text: "ok" },
      { type: "turn-end", reason: "stop" },
    ];
    const body = { ...BASE, thinking: { type: "adaptive" }, messages: [{ role: "user", content: "x" }] };
    const signatureOf = async (app: ReturnType<typeof appWith>) => {
      const message = (await (await app.request("/v1/messages", post(body))).json()) as {
        content: Array<{ signature?: string }>;
      };
      return message.content[0]?.signature;
    };
    const instance = (secret: string) =>
      createApp({
        engine: fixtureEngine(() => events).engine,
        logger: silentLogger,
        options: BASE_OPTIONS,
        now: () => 1_700_000_000_000,
        newId: () => "id1",
        cluster: { auth: createClusterAuth(secret), signingKey: deriveKey(secret, "thinking signatures") },
      });
    const secret = "one shared cluster secret";
    expect(await signatureOf(instance(secret))).toBe(await signatureOf(instance(secret)));
    expect(await signatureOf(instance(secret))).not.toBe(await signatureOf(instance("another cluster secret")));
    const single = await signatureOf(appWith(fixtureEngine(() => events).engine));
    expect(single).not.toBe(await signatureOf(appWith(fixtureEngine(() => events).engine)));
  });

  it.each([
    ["invalid JSON", "{", 400, "invalid_request_error"],
    ["missing max_tokens", { model: "m", messages: [{ role: "user", content: "x" }] }, 400, "invalid_request_error"],
  ])("rejects %s with an Anthropic error", async (_, body, status, type) => {
    const res = await appWith(fixtureEngine(() => TEXT).engine).request("/v1/messages", post(body));
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ type: "error", error: { type } });
  });

  it("answers every malformed body with a 4xx in Anthropic's shape, never a 500", async () => {
    const app = appWith(fixtureEngine(() => TEXT).engine);
    const user = (content: unknown) => ({ ...BASE, messages: [{ role: "user", content }] });
    const bodies: unknown[] = [
      "null",
      "[]",
      "42",
      {},
      { ...BASE },
      { ...BASE, messages: "hi" },
      { ...BASE, model: 7, messages: [{ role: "user", content: "x" }] },
      { ...BASE, max_tokens: 0, messages: [{ role: "user", content: "x" }] },
      user(null),
      user([{ type: "text" }]),
      user([{ type: "image", source: { type: "base64", media_type: "image/png", data: "!!" } }]),
      user([{ type: "image", source: { type: "base64", media_type: "image/png" } }]),
      user([{ type: "tool_result", content: "x" }]),
      user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "document" }] }]),
      user([{ type: "thinking", thinking: "x" }]),
      { ...BASE, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "x", input: [] }] }] },
      { ...user("x"), tools: [{ name: "" }] },
      { ...user("x"), tools: [{ name: "a", input_schema: "no" }] },
      { ...user("x"), tool_choice: { type: "sometimes" } },
      { ...user("x"), thinking: { type: "enabled", budget_tokens: "lots" } },
      { ...user("x"), output_config: { effort: "extreme" } },
      { ...user("x"), system: [{ type: "image" }] },
    ];
    for (const body of bodies) {
      const res = await app.request("/v1/messages", post(body));
      const json = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect({ body, status: res.status }).toMatchObject({ status: 400 });
      expect(json.type).toBe("error");
      expect(json.error.type).toBe("invalid_request_error");
      expect(json.error.message.length).toBeGreaterThan(0);
    }
  });

  it.each([
    [new ProxyError("not_found", "The model `claude-x` does not exist."), 404, "not_found_error"],
    [new ProxyError("rate_limited", "Slow down."), 429, "rate_limit_error"],
    [new ProxyError("permission_denied", "No."), 403, "permission_error"],
    [new ProxyError("backend_unavailable", "Down."), 503, "overloaded_error"],
    [new Error("internal detail"), 500, "api_error"],
  ])("maps an engine failure before the first event: %s", async (error, status, type) => {
    const res = await appWith(fixtureEngine(() => error).engine).request(
      "/v1/messages",
      post({ ...BASE, messages: [{ role: "user", content: "x" }] }),
    );
    expect(res.status).toBe(status);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe(type);
    expect(body.error.message).not.toContain("internal detail");
  });

  it("accepts the local key as x-api-key or Bearer and answers 401/413 in Anthropic's shape", async () => {
    const app = appWith(fixtureEngine(() => TEXT).engine, { apiKey: "k1", maxBodyBytes: 2000 });
    const body = { ...BASE, messages: [{ role: "user", content: "x" }] };
    expect((await app.request("/v1/messages", post(body, { "x-api-key": "k1" }))).status).toBe(200);
    expect((await app.request("/v1/messages", post(body, { authorization: "Bearer k1" }))).status).toBe(200);
    const denied = await app.request("/v1/messages", post(body, { "x-api-key": "nope" }));
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const big = { ...body, messages: [{ role: "user", content: "x".repeat(3000) }] };
    const tooLarge = await app.request("/v1/messages", post(big, { "x-api-key": "k1" }));
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ type: "error", error: { type: "request_too_large" } });
  });

  it("cancels the turn when the client goes away mid-stream", async () => {
    const { engine, released } = fixtureEngine(() => "hang");
    const client = new AbortController();
    const res = await appWith(engine).request("/v1/messages", {
      ...post({ ...BASE, stream: true, messages: [{ role: "user", content: "x" }] }),
      signal: client.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(() => released).toEqual([true]);
  });
});

describe("POST /v1/messages/count_tokens", () => {
  it("estimates input tokens with o200k_base, more for more text", async () => {
    const app = appWith(fixtureEngine(() => TEXT).engine);
    const count = async (content: string) => {
      const res = await app.request(
        "/v1/messages/count_tokens?beta=true",
        post({ model: "claude-sonnet-5-5", messages: [{ role: "user", content }] }),
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { input_tokens: number }).input_tokens;
    };
    const short = await count("hello world");
    // "hello world" is 2 o200k tokens, plus 3 of framing for the one message.
    expect(short).toBe(5);
    expect(await count("hello world <|endoftext|> ".repeat(50))).toBeGreaterThan(100);
  });
});

describe("GET /v1/models", () => {
  it("answers in Anthropic's shape when anthropic-version is present, OpenAI's otherwise", async () => {
    const app = appWith(fixtureEngine(() => TEXT).engine);
    const anthropic = await app.request("/v1/models", { headers: { "anthropic-version": "2023-06-01" } });
    expect(await anthropic.json()).toEqual({
      data: [
        {
          type: "model",
          id: "claude-4.5-sonnet",
          display_name: "Sonnet 4.5",
          created_at: "2023-11-14T22:13:20.000Z",
          max_input_tokens: 200_000,
        },
      ],
      has_more: false,
      first_id: "claude-4.5-sonnet",
      last_id: "claude-4.5-sonnet",
    });
    expect(await (await app.request("/v1/models")).json()).toMatchObject({ object: "list" });
    const one = await app.request("/v1/models/claude-4.5-sonnet", { headers: { "anthropic-version": "2023-06-01" } });
    expect(await one.json()).toMatchObject({ type: "model", id: "claude-4.5-sonnet" });
    const missing = await app.request("/v1/models/nope", { headers: { "anthropic-version": "2023-06-01" } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });
});
