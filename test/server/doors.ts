/**
 * The doors as test fixtures: how to put a given thing (a tool schema, history tool arguments, nested content,
 * images, a model) into a request of each surface, how to send it, and how to read the answer. The shared cross-door
 * tests (hostile-input, error-kinds) run every case against every door in {@link DOORS}: the three HTTP doors and ACP,
 * which `send` drives over its JSON-RPC stream transport with the ACP client SDK (acp-door.ts). A case a door has no
 * equivalent of is named in its `without`, with the reason, and not run on it. The HTTP-only tests
 * (request-log, model-aliases, huge-bodies: an access log line, a `model` field, a body limit) run {@link HTTP_DOORS}.
 */
import type { AgentClient, AgentTurn, ModelInfo, TurnRequest } from "../../src/backend/types.js";
import { createEngine, type Engine } from "../../src/engine/index.js";
import { type AppGateway, createApp } from "../../src/server/app.js";
import type { AppOptions } from "../../src/surfaces/kit/deps.js";
import { type Logger, silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "../support/app-options.js";
import { ACP_DOOR, type AcpAnswer, promptOverAcp } from "./acp-door.js";

type Json = Record<string, unknown>;

/** A request a case built, and the path of the field its error must name. */
export interface Built {
  body: unknown;
  field: string;
}

/** The shared cases some door has no equivalent of. */
export type OptionalCase = "toolSchema" | "toolArguments" | "badToolArguments" | "foreignHost";

/** What every door's fixture says, whatever its wire. */
interface DoorBase {
  name: string;
  /** A minimal valid request for `model` with one user text (`hi` unless given). */
  basic(model: string, text?: string): unknown;
  /** A request declaring one tool whose input schema is `schema`; `field` starts the path naming the schema. */
  toolSchema?(schema: unknown): Built;
  /** A request whose history holds one tool call with these arguments (an object, or raw text where it is text). */
  toolArguments?(args: unknown): Built;
  /** A request whose history holds one tool call with arguments that are no JSON object. */
  badToolArguments?(): Built;
  /** A request whose user content carries `extra` where the door keeps arbitrary values. */
  content(extra: unknown): Built;
  /** A request with one user text and these images (base64), each declared as `declared`; a field for each. */
  images(base64s: readonly string[], declared: string): { body: unknown; fields: string[] };
  /** How the door's wire says each refusal: an HTTP status, or ACP's JSON-RPC error code. */
  refusals: { invalid: number; tooLarge: number; bodyTooLarge: number };
  /** Bytes of one image that put the whole request over the door's size limit, and what the door says then. */
  overLimit: { imageBytes: number; message: string };
  /** Each shared case this door has no equivalent of, with why. */
  without: Partial<Record<OptionalCase, string>>;
}

/** An HTTP door. */
export interface HttpDoor extends DoorBase {
  transport: "http";
  path: string;
  /** Its error body shape. */
  shape: "openai" | "anthropic";
  basic(model: string, text?: string): Json;
}

/** The ACP agent as a door: a request is a prompt's content blocks and, optionally, the session's model. */
export interface AcpDoor extends DoorBase {
  transport: "acp";
}

export type Door = HttpDoor | AcpDoor;

const user = (text: string) => ({ role: "user", content: text });
const HTTP_REFUSALS = { invalid: 400, tooLarge: 413, bodyTooLarge: 413 };
const HTTP_OVER_LIMIT = { imageBytes: 21 * 1024 * 1024, message: "The request body is larger than" };
const jsonText = (args: unknown) => (typeof args === "string" ? args : JSON.stringify(args));

const chatToolArguments = (args: unknown): Built => ({
  body: {
    model: "auto",
    messages: [
      user("hi"),
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: jsonText(args) } }],
      },
      { role: "tool", tool_call_id: "c1", content: "r" },
    ],
  },
  field: "messages[1].tool_calls[0].function.arguments",
});

const messagesToolArguments = (input: unknown): Built => ({
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
});

const responsesToolArguments = (args: unknown): Built => ({
  body: {
    model: "auto",
    input: [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: "c1", name: "t", arguments: jsonText(args) },
      { type: "function_call_output", call_id: "c1", output: "r" },
    ],
  },
  field: "input[1].arguments",
});

/** The HTTP doors. */
export const HTTP_DOORS: readonly HttpDoor[] = [
  {
    transport: "http",
    name: "chat",
    path: "/v1/chat/completions",
    shape: "openai",
    refusals: HTTP_REFUSALS,
    overLimit: HTTP_OVER_LIMIT,
    without: {},
    basic: (model, text = "hi") => ({ model, messages: [user(text)] }),
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
    toolArguments: chatToolArguments,
    badToolArguments: () => chatToolArguments("{not json"),
    content: (extra) => ({
      body: { model: "auto", messages: [{ role: "user", content: [{ type: "text", text: "x", extra }] }] },
      field: "messages[0].content[0].extra",
    }),
    images: (images, declared) => ({
      body: {
        model: "auto",
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "x" },
              ...images.map((base64) => ({
                type: "image_url",
                image_url: { url: `data:${declared};base64,${base64}` },
              })),
            ],
          },
        ],
      },
      fields: images.map((_, i) => `messages[0].content[${i + 1}].image_url.url`),
    }),
  },
  {
    transport: "http",
    name: "messages",
    path: "/v1/messages",
    shape: "anthropic",
    refusals: HTTP_REFUSALS,
    overLimit: HTTP_OVER_LIMIT,
    without: {},
    basic: (model, text = "hi") => ({ model, max_tokens: 100, messages: [user(text)] }),
    toolSchema: (schema) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [user("hi")],
        tools: [{ name: "t", input_schema: { type: "object", properties: { a: schema } } }],
      },
      field: "tools[0].input_schema",
    }),
    toolArguments: messagesToolArguments,
    badToolArguments: () => ({ ...messagesToolArguments("not an object"), field: "messages.1.content.0.input" }),
    content: (extra) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [{ role: "user", content: [{ type: "text", text: "x", extra }] }],
      },
      field: "messages[0].content[0].extra",
    }),
    images: (images, declared) => ({
      body: {
        model: "auto",
        max_tokens: 100,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "x" },
              ...images.map((data) => ({ type: "image", source: { type: "base64", media_type: declared, data } })),
            ],
          },
        ],
      },
      fields: images.map((_, i) => `messages.0.content.${i + 1}.source.data`),
    }),
  },
  {
    transport: "http",
    name: "responses",
    path: "/v1/responses",
    shape: "openai",
    refusals: HTTP_REFUSALS,
    overLimit: HTTP_OVER_LIMIT,
    without: {},
    basic: (model, text = "hi") => ({ model, input: text }),
    toolSchema: (schema) => ({
      body: {
        model: "auto",
        input: "hi",
        tools: [{ type: "function", name: "t", parameters: { type: "object", properties: { a: schema } } }],
      },
      field: "tools[0].parameters",
    }),
    toolArguments: responsesToolArguments,
    badToolArguments: () => responsesToolArguments("{not json"),
    content: (extra) => ({
      body: { model: "auto", input: [{ role: "user", content: [{ type: "input_text", text: "x", extra }] }] },
      field: "input[0].content[0].extra",
    }),
    images: (images, declared) => ({
      body: {
        model: "auto",
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "x" },
              ...images.map((base64) => ({ type: "input_image", image_url: `data:${declared};base64,${base64}` })),
            ],
          },
        ],
      },
      fields: images.map((_, i) => `input[0].content[${i + 1}].image_url`),
    }),
  },
];

/** Every door of the shared cross-door tests. */
export const DOORS: readonly Door[] = [...HTTP_DOORS, ACP_DOOR];

/** What a door answered, whatever its wire. */
export interface Answer {
  /** The request went through: HTTP 200, or an ACP prompt that ended with a stop reason. */
  ok: boolean;
  /** The HTTP status, or the JSON-RPC error code of a refused ACP request (0 when it ended). */
  status: number;
  /** The error's message and the field it names: an OpenAI error's param; Anthropic and ACP name it in the message. */
  error?: { message: string; field: string };
  /** ACP's answer as it came: the text streamed, the stop reason or the error with its `data`. */
  acp?: AcpAnswer;
}

/**
 * Sends what a case built to `door` on the app or engine `target` (from {@link appWithRecorder} or a stack): an HTTP
 * door posts it, ACP prompts a new session of a fresh agent. `wire` rewrites the request's JSON text on its way
 * (what a client cannot serialize itself, such as nesting 10,000 levels deep).
 */
export async function send(
  door: Door,
  target: { app: { request(path: string, init: RequestInit): Response | Promise<Response> }; engine: Engine },
  body: unknown,
  options: { wire?(text: string): string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  if (door.transport === "acp") {
    const request = body as { prompt: unknown; model?: string };
    const answer = await promptOverAcp(target.engine, request.prompt, {
      ...(request.model === undefined ? {} : { config: { model: request.model } }),
      ...(options.wire === undefined ? {} : { wire: options.wire }),
    });
    if (answer.error === undefined) return { ok: true, status: 0, acp: answer };
    const { code, message } = answer.error;
    return { ok: false, status: code, error: { message, field: message }, acp: answer };
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const response = await target.app.request(door.path, post(options.wire?.(text) ?? text, options.headers));
  if (response.status === 200) {
    await response.text();
    return { ok: true, status: 200 };
  }
  return { ok: false, status: response.status, error: await errorOf(door, response) };
}

/** The error an HTTP answer carries, whatever the door's shape: the message and (OpenAI) the param. */
export async function errorOf(door: HttpDoor, response: Response): Promise<{ message: string; field: string }> {
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
  const engine = createEngine({ agentClient, newConversationId: () => `conv-${runs.length + 1}` });
  const app = createApp(
    {
      engine,
      logger,
      options: testAppOptions(options),
      now: Date.now,
      newId: () => "id",
    },
    gateway,
  );
  return { app, runs, engine };
}

/** A JSON POST for `app.request`. */
export const post = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});
