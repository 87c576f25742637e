import { describe, expect, it } from "vitest";
import { testAppOptions } from "../../test/support/app-options.js";
import type { AgentClient, AgentTurn, BackendEvent, ModelInfo, TurnRequest } from "../backend/types.js";
import { createEngine } from "../engine/index.js";
import type { AppOptions } from "../surfaces/kit/deps.js";
import { ProxyError } from "../util/errors.js";
import { silentLogger } from "../util/logger.js";
import { createApp } from "./app.js";

const MODELS: ModelInfo[] = [
  { id: "default", displayName: "Auto", aliases: [], reasoning: false, maxMode: false, vision: true },
  {
    id: "claude-4.5-sonnet-thinking",
    displayName: "Sonnet 4.5 Thinking",
    aliases: [],
    reasoning: true,
    maxMode: false,
    vision: true,
  },
];

/** Edge-only fake: the HTTP edge tests here never reach Cursor; the real path is covered in test/server. */
function scriptedClient(
  script: (request: TurnRequest) => BackendEvent[] | Error,
): AgentClient & { requests: TurnRequest[] } {
  const requests: TurnRequest[] = [];
  return {
    requests,
    listModels: async () => MODELS,
    startTurn(request): AgentTurn {
      requests.push(request);
      const result = script(request);
      return {
        conversationId: request.conversationId,
        status: "streaming",
        pendingToolCallIds: [],
        stream: () =>
          (async function* () {
            if (result instanceof Error) throw result;
            yield* result;
          })(),
        resume: () => (async function* (): AsyncGenerator<BackendEvent> {})(),
        close: async () => {},
      };
    },
  };
}

function appWith(
  options: Partial<AppOptions> = {},
  client = scriptedClient(() => [
    { type: "text-delta", text: "hi" },
    { type: "turn-end", reason: "stop" },
  ]),
) {
  const lines: string[] = [];
  const app = createApp({
    engine: createEngine({ agentClient: client }),
    logger: { ...silentLogger, info: (m, f) => lines.push(`${m} ${JSON.stringify(f)}`) },
    options: testAppOptions({ maxBodyBytes: 4096, version: "0.0.0-test", ...options }),
    now: () => 1_700_000_000_000,
    newId: () => "id1",
  });
  return { app, lines, client };
}

const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

describe("HTTP edge", () => {
  it("answers a non-streaming completion and logs one line with model, status and timings", async () => {
    const { app, lines } = appWith();
    const res = await app.request(
      "/v1/chat/completions",
      post({ model: "auto", messages: [{ role: "user", content: "x" }] }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe("hi");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/POST \/v1\/chat\/completions 200/);
    expect(lines[0]).toMatch(/"model":"default".*"total_ms":0.*"turn":"new"/);
  });

  it("rejects malformed JSON, bad fields, unknown models and n>1 with OpenAI error bodies", async () => {
    const { app } = appWith();
    const cases: Array<[unknown, number, string | null]> = [
      ["{not json", 400, "body"],
      [{ messages: [{ role: "user", content: "x" }] }, 400, "model"],
      [{ model: "auto" }, 400, "messages"],
      [{ model: "auto", messages: [{ role: "wizard", content: "x" }] }, 400, "messages[0].role"],
      [{ model: "auto", n: 2, messages: [{ role: "user", content: "x" }] }, 400, "n"],
      [{ model: "nope", messages: [{ role: "user", content: "x" }] }, 404, "model"],
    ];
    for (const [body, status, param] of cases) {
      const res = await app.request("/v1/chat/completions", post(body));
      expect(res.status, JSON.stringify(body)).toBe(status);
      const json = (await res.json()) as {
        error: { message: string; type: string; param: string | null; code: unknown };
      };
      expect(json.error.param).toBe(param);
      expect(json.error.message).not.toMatch(/\n\s+at /);
    }
  });

  it("returns 413 for bodies over the limit and a JSON 404 for unknown routes", async () => {
    const { app } = appWith();
    const big = await app.request(
      "/v1/chat/completions",
      post({ model: "auto", messages: [{ role: "user", content: "x".repeat(10_000) }] }),
    );
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { type: string } }).error.type).toBeTruthy();
    const missing = await app.request("/nope");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toMatch(/application\/json/);
  });

  it("sets x-request-id on streamed, JSON and error responses, echoing the client's id", async () => {
    const { app } = appWith();
    const body = { model: "auto", messages: [{ role: "user", content: "x" }] };
    const streamed = await app.request("/v1/chat/completions", post({ ...body, stream: true }));
    expect(streamed.headers.get("x-request-id")).toBe("id1");
    expect(streamed.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(await streamed.text()).toMatch(/data: \[DONE\]/);
    const json = await app.request("/v1/chat/completions", post(body, { "x-request-id": "client-7" }));
    expect(json.headers.get("x-request-id")).toBe("client-7");
    const invalid = await app.request("/v1/chat/completions", post("{not json"));
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get("x-request-id")).toBe("id1");
    const missing = await app.request("/nope");
    expect(missing.headers.get("x-request-id")).toBe("id1");
  });

  it("gives a streamed chat answer its request ids once, Anthropic's too when the client speaks Anthropic", async () => {
    const { app } = appWith();
    const body = { model: "auto", stream: true, messages: [{ role: "user", content: "x" }] };
    const plain = await app.request("/v1/chat/completions", post(body, { "x-request-id": "client-8" }));
    expect(plain.headers.get("x-request-id")).toBe("client-8");
    expect(plain.headers.get("request-id")).toBeNull();
    await plain.text();
    const anthropic = { "x-request-id": "client-9", "anthropic-version": "2023-06-01" };
    const streamed = await app.request("/v1/chat/completions", post(body, anthropic));
    expect(streamed.headers.get("x-request-id")).toBe("client-9");
    expect(streamed.headers.get("request-id")).toBe("client-9");
    expect(await streamed.text()).toMatch(/data: \[DONE\]/);
  });

  it("lists ignored parameters in a response header", async () => {
    const { app } = appWith();
    const res = await app.request(
      "/v1/chat/completions",
      post({ model: "auto", temperature: 0.2, top_p: 1, messages: [{ role: "user", content: "x" }] }),
    );
    expect(res.headers.get("x-cursor-bridge-ignored-params")).toBe("temperature,top_p");
  });

  it("requires the configured API key (Bearer or x-api-key) on /v1 but not on /health", async () => {
    const { app } = appWith({ apiKey: "s3cret-key" });
    const req = { model: "auto", messages: [{ role: "user", content: "x" }] };
    expect((await app.request("/v1/chat/completions", post(req))).status).toBe(401);
    expect((await app.request("/v1/chat/completions", post(req, { authorization: "Bearer wrong" }))).status).toBe(401);
    expect((await app.request("/v1/chat/completions", post(req, { authorization: "Bearer s3cret-key" }))).status).toBe(
      200,
    );
    expect((await app.request("/v1/models", { headers: { "x-api-key": "s3cret-key" } })).status).toBe(200);
    expect((await app.request("/health")).status).toBe(200);
  });

  it("sends no CORS headers unless origins are configured", async () => {
    const off = appWith().app;
    const res = await off.request("/v1/models", { headers: { origin: "https://evil.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const on = appWith({ corsOrigins: ["https://app.example"] }).app;
    const ok = await on.request("/v1/models", { headers: { origin: "https://app.example" } });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
  });

  it("reports the upstream in /health and owned_by, and resolves model ids and aliases", async () => {
    const { app } = appWith();
    const health = (await (await app.request("/health")).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: "ok", upstream: "emulator", emulator: true, logged_in: false });
    const list = (await (await app.request("/v1/models")).json()) as { data: Array<{ id: string; owned_by: string }> };
    expect(list.data.map((m) => m.id)).toEqual(["default", "claude-4.5-sonnet-thinking", "auto"]);
    expect(new Set(list.data.map((m) => m.owned_by))).toEqual(new Set(["cursor-emulator"]));
    const one = await app.request("/v1/models/claude-4.5-sonnet-thinking");
    expect(((await one.json()) as { reasoning: boolean }).reasoning).toBe(true);
    expect((await app.request("/v1/models/gpt-0")).status).toBe(404);
  });

  it("maps upstream failures before the first token to real HTTP statuses", async () => {
    const cases: Array<[ProxyError, number, string | undefined]> = [
      [new ProxyError("quota_exceeded", "usage limit", { retryAfterSeconds: 60 }), 429, "60"],
      [new ProxyError("unauthenticated", "token expired"), 401, undefined],
      [new ProxyError("backend_unavailable", "down"), 503, undefined],
      [new ProxyError("timeout", "stalled"), 504, undefined],
    ];
    for (const [error, status, retryAfter] of cases) {
      const { app } = appWith(
        {},
        scriptedClient(() => error),
      );
      const res = await app.request(
        "/v1/chat/completions",
        post({ model: "auto", stream: true, messages: [{ role: "user", content: "x" }] }),
      );
      expect(res.status).toBe(status);
      expect(res.headers.get("retry-after") ?? undefined).toBe(retryAfter);
      const body = (await res.json()) as { error: { message: string } };
      if (status === 401) expect(body.error.message).toMatch(/cursor-bridge login/);
    }
  });

  it("sends an error after streaming started as one error frame, then closes", async () => {
    const client = scriptedClient(() => [{ type: "text-delta", text: "par" }]);
    const failing: AgentClient = {
      ...client,
      startTurn(request) {
        const turn = client.startTurn(request);
        return {
          ...turn,
          stream: () =>
            (async function* (): AsyncGenerator<BackendEvent> {
              yield { type: "text-delta", text: "par" };
              throw new ProxyError("backend_unavailable", "connection lost");
            })(),
        };
      },
    };
    const { app } = appWith({}, failing as AgentClient & { requests: TurnRequest[] });
    const res = await app.request(
      "/v1/chat/completions",
      post({ model: "auto", stream: true, messages: [{ role: "user", content: "x" }] }),
    );
    expect(res.status).toBe(200);
    const text = await res.text();
    const frames = text.trim().split("\n\n");
    expect(frames.at(-1)).toMatch(/^data: \{"error":\{"message":"connection lost"/);
    expect(text).not.toContain("[DONE]");
  });
});
