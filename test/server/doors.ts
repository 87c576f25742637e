/**
 * The API doors as test fixtures: how to put a given thing (a tool schema, history tool arguments, nested content,
 * an image, a model) into a request of each surface, and how to read the field an error names. The parameterised
 * tests (hostile-input, model-aliases, request-log) run every case against every door here; a new surface joins
 * them by adding one entry to {@link DOORS}.
 */
import type { AgentClient, AgentTurn, ModelInfo, TurnRequest } from "../../src/backend/types.js";
import { createEngine } from "../../src/engine/index.js";
import { type AppGateway, createApp } from "../../src/server/app.js";
import type { AppOptions } from "../../src/surfaces/kit/deps.js";
import { type Logger, silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "../support/app-options.js";

type Json = Record<string, unknown>;

/** One API door. */
export interface Door {
  name: string;
  path: string;
  /** Its error body shape. */
  shape: "openai" | "anthropic";
  /** A minimal valid request for `model` with one user text. */
  basic(model: string): Json;
  /** A request declaring one tool whose input schema is `schema`; `field` starts the path naming the schema. */
  toolSchema(schema: unknown): { body: Json; field: string };
  /** A request whose history holds one tool call with these arguments (an object, or raw text where it is text). */
  toolArguments(args: unknown): { body: Json; field: string };
  /** A request whose user content part carries `extra` in an unknown key. */
  content(extra: unknown): { body: Json; field: string };
  /** A request with one image of these base64 bytes, declared as `declared`. */
  image(base64: string, declared: string): { body: Json; field: string };
  /** A request whose history holds one tool call with arguments that are no JSON object. */
  badToolArguments(): { body: Json; field: string };
}

const user = (text: string) => ({ role: "user", content: text });

export const DOORS: readonly Door[] = [
  {
    name: "chat",
    path: "/v1/chat/completions",
    shape: "openai",
    basic: (model) => ({ model, messages: [user("hi")] }),
    toolSchema: (schema) => ({
      body: {
        model: "auto",
        messages: [user("hi")],
        tools: [
          { type: "function", function: { name: "t", parameters: { type: "object", properties: { a: schema } } } },
        ],
      },
      field: "tools[0].function.parameters",
    }),
    toolArguments: (args) => ({
      body: {
        model: "auto",
        messages: [
          user("hi"),
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "c1",
                type: "function",
                function: { name: "t", arguments: typeof args === "string" ? args : JSON.stringify(args) },
              },
            ],
          },
          { role: "tool", tool_call_id: "c1", content: "r" },
        ],
      },
      field: "messages[1].tool_calls[0].function.arguments",
    }),
    content: (extra) => ({
      body: { model: "auto", messages: [{ role: "user", content: [{ type: "text", text: "x", extra }] }] },
      field: "messages[0].content[0].extra",
    }),
    image: (base64, declared) => ({
      body: {
        model: "auto",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "x" },
              { type: "image_url", image_url: { url: `data:${declared};base64,${base64}` } },
            ],
          },
        ],
      },
      field: "messages[0].content[1].image_url.url",
    }),
    badToolArguments() {
      return this.toolArguments("{not json");
    },
  },
  {
    name: "messages",
    path: "/v1/messages",
    shape: "anthropic",
    basic: (model) => ({ model, max_tokens: 100, messages: [user("hi")] }),
    toolSchema: (schema) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [user("hi")],
        tools: [{ name: "t", input_schema: { type: "object", properties: { a: schema } } }],
      },
      field: "tools[0].input_schema",
    }),
    toolArguments: (input) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [
          user("hi"),
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "r" }] },
        ],
      },
      field: "messages[1].content[0].input",
    }),
    content: (extra) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [{ role: "user", content: [{ type: "text", text: "x", extra }] }],
      },
      field: "messages[0].content[0].extra",
    }),
    image: (data, declared) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "x" },
              { type: "image", source: { type: "base64", media_type: declared, data } },
            ],
          },
        ],
      },
      field: "messages.0.content.1.source.data",
    }),
    badToolArguments() {
      return { ...this.toolArguments("not an object"), field: "messages.1.content.0.input" };
    },
  },
  {
    name: "responses",
    path: "/v1/responses",
    shape: "openai",
    basic: (model) => ({ model, input: "hi" }),
    toolSchema: (schema) => ({
      body: {
        model: "auto",
        input: "hi",
        tools: [{ type: "function", name: "t", parameters: { type: "object", properties: { a: schema } } }],
      },
      field: "tools[0].parameters",
    }),
    toolArguments: (args) => ({
      body: {
        model: "auto",
        input: [
          { role: "user", content: "hi" },
          {
            type: "function_call",
            call_id: "c1",
            name: "t",
            arguments: typeof args === "string" ? args : JSON.stringify(args),
          },
          { type: "function_call_output", call_id: "c1", output: "r" },
        ],
      },
      field: "input[1].arguments",
    }),
    content: (extra) => ({
      body: { model: "auto", input: [{ role: "user", content: [{ type: "input_text", text: "x", extra }] }] },
      field: "input[0].content[0].extra",
    }),
    image: (base64, declared) => ({
      body: {
        model: "auto",
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "x" },
              { type: "input_image", image_url: `data:${declared};base64,${base64}` },
            ],
          },
        ],
      },
      field: "input[0].content[1].image_url",
    }),
    badToolArguments() {
      return this.toolArguments("{not json");
    },
  },
];

/** The error an answer carries, whatever the door's shape: the message and (OpenAI) the param. */
export async function errorOf(door: Door, response: Response): Promise<{ message: string; field: string }> {
  const body = (await response.json()) as {
    type?: string;
    error: { message: string; param?: string | null; type: string };
  };
  if (door.shape === "anthropic") {
    if (body.type !== "error") throw new Error(`not an Anthropic error: ${JSON.stringify(body).slice(0, 300)}`);
    return { message: body.error.message, field: body.error.message };
  }
  return { message: body.error.message, field: body.error.param ?? "" };
}

export const MODELS: ModelInfo[] = [
  { id: "default", displayName: "Auto", aliases: [], reasoning: false, maxMode: false, vision: true },
  { id: "gpt-5.2", displayName: "GPT-5.2", aliases: [], reasoning: false, maxMode: false, vision: true },
  { id: "claude-4.5-sonnet", displayName: "Sonnet 4.5", aliases: [], reasoning: false, maxMode: false, vision: true },
];

/**
 * An app on the real engine over an agent client that answers "hi" and records every Run it was asked for; with
 * `failWith`, each Run fails with that error once it is open (as Cursor's 429 arrives on an open Run).
 */
export function appWithRecorder(
  options: Partial<AppOptions> = {},
  logger: Logger = silentLogger,
  failWith?: Error,
  gateway?: AppGateway,
) {
  const runs: TurnRequest[] = [];
  const agentClient: AgentClient = {
    listModels: async () => MODELS,
    startTurn(request): AgentTurn {
      runs.push(request);
      return {
        conversationId: request.conversationId,
        runId: `run-${runs.length}`,
        status: "streaming",
        pendingToolCallIds: [],
        stream: async function* () {
          request.onRunOpened?.(`run-${runs.length}`);
          if (failWith !== undefined) throw failWith;
          yield { type: "text-delta", text: "hi" } as const;
          yield { type: "usage", usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3 } } as const;
          yield { type: "turn-end", reason: "stop" } as const;
        },
        resume: async function* () {},
        close: async () => {},
      };
    },
  };
  const app = createApp(
    {
      engine: createEngine({ agentClient, newConversationId: () => `conv-${runs.length + 1}` }),
      logger,
      options: testAppOptions(options),
      now: Date.now,
      newId: () => "id",
    },
    gateway,
  );
  return { app, runs };
}

/** A JSON POST for `app.request`. */
export const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
