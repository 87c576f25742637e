/**
 * Bounded input at the HTTP edge: deep JSON is a 400 naming the field (never a 500 or a Run), and the headers that
 * list client-supplied names stay small and valid whatever the client sends.
 */
import { describe, expect, it } from "vitest";
import { testAppOptions } from "../../test/support/app-options.js";
import type { AgentClient, AgentTurn, ModelInfo } from "../backend/types.js";
import { createEngine } from "../engine/index.js";
import { MAX_HEADER_LIST_CHARS } from "../surfaces/kit/header-list.js";
import { silentLogger } from "../util/logger.js";
import { createApp } from "./app.js";

const MODELS: ModelInfo[] = [
  { id: "default", displayName: "Auto", aliases: [], reasoning: false, maxMode: false, vision: false },
];

function appWithCounter() {
  const counter = { runs: 0 };
  const agentClient: AgentClient = {
    listModels: async () => MODELS,
    startTurn(request): AgentTurn {
      counter.runs += 1;
      return {
        conversationId: request.conversationId,
        status: "streaming",
        pendingToolCallIds: [],
        stream: async function* () {
          yield { type: "text-delta", text: "hi" } as const;
          yield { type: "turn-end", reason: "stop" } as const;
        },
        resume: async function* () {},
        close: async () => {},
      };
    },
  };
  const app = createApp({
    engine: createEngine({ agentClient }),
    logger: silentLogger,
    options: testAppOptions(),
    now: Date.now,
    newId: () => "id",
  });
  return { app, counter };
}

const post = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });
const user = '{"role":"user","content":"x"}';
const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("deeply nested JSON", () => {
  it.each([
    [
      "5,000 levels in an unknown field",
      `{"model":"auto","messages":[${user}],"extra":${arrays(5000)}}`,
      "extra[0][0][0][0][0]",
    ],
    [
      "300 levels in tool parameters",
      `{"model":"auto","messages":[${user}],"tools":[{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{"a":${arrays(300)}}}}}]}`,
      "tools[0].function.parameters.properties.a",
    ],
    [
      "100 levels inside a tool call's arguments string",
      `{"model":"auto","messages":[${user},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"t","arguments":${JSON.stringify(arrays(100))}}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
      "messages[1].tool_calls[0].function.arguments",
    ],
    ["1,000,000 levels in messages", `{"model":"auto","messages":${arrays(1_000_000)}}`, "messages[0][0][0][0][0]"],
  ])("%s → 400 naming the field, no Run", async (_name, body, param) => {
    const { app, counter } = appWithCounter();
    const res = await app.request("/v1/chat/completions", post(body));
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { param: string; code: string; message: string } }).error;
    expect(error.code).toBe("nesting_too_deep");
    expect(error.param).toBe(param);
    expect(counter.runs).toBe(0);
  });

  it("accepts a schema nested 20 levels deep", async () => {
    const { app, counter } = appWithCounter();
    let schema: unknown = { type: "string" };
    for (let i = 0; i < 20; i++) schema = { type: "object", properties: { a: schema } };
    const body = JSON.stringify({
      model: "auto",
      messages: [{ role: "user", content: "x" }],
      tools: [{ type: "function", function: { name: "t", parameters: schema } }],
    });
    expect((await app.request("/v1/chat/completions", post(body))).status).toBe(200);
    expect(counter.runs).toBe(1);
  });
});

describe("bounded x-cursor-bridge-* headers", () => {
  it("caps 3,000 unknown keys at ~1 KB with '... and N more', and survives keys a header cannot carry", async () => {
    const { app } = appWithCounter();
    const body: Record<string, unknown> = { model: "auto", messages: [{ role: "user", content: "x" }] };
    for (let i = 0; i < 3000; i++) body[`unknown_key_${i}`] = i;
    body["bad\r\nkey\u2026"] = 1;
    const res = await app.request("/v1/chat/completions", post(JSON.stringify(body)));
    expect(res.status).toBe(200);
    const header = res.headers.get("x-cursor-bridge-ignored-params") ?? "";
    expect(header.length).toBeLessThanOrEqual(MAX_HEADER_LIST_CHARS);
    expect(header).toMatch(/^unknown_key_0,unknown_key_1,.*,\.\.\. and \d+ more$/);
  });
});

describe("parameters that change the output but cannot be honoured", () => {
  it("answer with x-cursor-bridge-warnings for response_format, not for stop (the bridge honours it)", async () => {
    const { app } = appWithCounter();
    const body = JSON.stringify({
      model: "auto",
      messages: [{ role: "user", content: "x" }],
      response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "object" } } },
      stop: ["END"],
    });
    const res = await app.request("/v1/chat/completions", post(body));
    expect(res.status).toBe(200);
    const warnings = res.headers.get("x-cursor-bridge-warnings") ?? "";
    expect(warnings).toContain("response_format json_schema is approximated with an instruction");
    expect(warnings).not.toContain("stop");
    expect(res.headers.get("x-cursor-bridge-ignored-params")).toBeNull();
  });
});
