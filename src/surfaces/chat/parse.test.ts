import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { formatParamPath } from "../kit/param-path.js";
import { parseChatCompletionRequest } from "./parse.js";
import { CHECKED_IGNORED_KEYS } from "./request.js";

const user = { role: "user", content: "hi" };

function rejection(body: unknown): ProxyError {
  try {
    parseChatCompletionRequest(body);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected the request to be rejected");
}

describe("parseChatCompletionRequest: accepted shapes", () => {
  it("accepts a minimal request and reports nothing ignored", () => {
    const { request, ignoredParams } = parseChatCompletionRequest({ model: "m", messages: [user] });
    expect(request.model).toBe("m");
    expect(request.messages).toEqual([user]);
    expect(ignoredParams).toEqual([]);
  });

  it("accepts every role, text parts, assistant content:null with tool_calls, and tool results", () => {
    const body = {
      model: "m",
      messages: [
        { role: "system", content: "s" },
        { role: "developer", content: [{ type: "text", text: "d" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"p":1}' } }],
        },
        { role: "tool", tool_call_id: "c1", content: '{"ok":true}' },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "x" }] },
      ],
    };
    expect(parseChatCompletionRequest(body).request.messages).toHaveLength(6);
  });

  it("accepts tools the way the Vercel AI SDK sends them ($schema, additionalProperties, strict)", () => {
    const parameters = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    };
    const { request } = parseChatCompletionRequest({
      model: "m",
      messages: [user],
      tools: [{ type: "function", function: { name: "weather", description: "d", parameters, strict: false } }],
      tool_choice: { type: "function", function: { name: "weather" } },
      stream: true,
      stream_options: { include_usage: true },
      parallel_tool_calls: true,
      reasoning_effort: "minimal",
      max_completion_tokens: 100,
      user: "u",
      metadata: { a: "b" },
    });
    expect(request.tools?.[0]?.function.parameters).toEqual(parameters);
  });

  it("keeps a tool's schema verbatim however deep, and refuses one that is not a JSON object", () => {
    const parameters = { type: "object", properties: { a: { anyOf: [{ type: "array", items: [1, { b: null }] }] } } };
    const tool = (p: unknown) => ({ type: "function", function: { name: "f", parameters: p } });
    const { request } = parseChatCompletionRequest({ model: "m", messages: [user], tools: [tool(parameters)] });
    expect(request.tools?.[0]?.function.parameters).toEqual(parameters);
    for (const [value, got] of [
      ["x", "a string"],
      [[1], "an array"],
      [5, "an integer"],
    ] as const) {
      expect(rejection({ model: "m", messages: [user], tools: [tool(value)] }).message).toBe(
        `Invalid type for 'tools[0].function.parameters': expected record, but got ${got}.`,
      );
    }
  });

  it("reports harmless and unknown parameters as ignored, in body order, skipping nulls", () => {
    const { ignoredParams } = parseChatCompletionRequest({
      temperature: 0.2,
      model: "m",
      messages: [user],
      top_p: 1,
      seed: 7,
      stop: ["x"],
      logit_bias: {},
      response_format: { type: "json_object" },
      frequency_penalty: null,
      x_custom: { deep: true },
    });
    expect(ignoredParams).toEqual(["temperature", "top_p", "seed", "logit_bias", "x_custom"]);
  });

  it("validates response_format and stop (they are acted on, so not listed as ignored)", () => {
    const format = { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" }, strict: true } };
    const { request, ignoredParams } = parseChatCompletionRequest({
      model: "m",
      messages: [user],
      response_format: format,
      stop: "END",
    });
    expect(request.response_format).toEqual(format);
    expect(ignoredParams).toEqual([]);
    expect(rejection({ model: "m", messages: [user], response_format: { type: "xml" } }).param).toBe(
      "response_format.type",
    );
    expect(rejection({ model: "m", messages: [user], response_format: { type: "json_schema" } }).param).toBe(
      "response_format.json_schema",
    );
    expect(rejection({ model: "m", messages: [user], stop: 5 }).param).toBe("stop");
  });
});

describe("parseChatCompletionRequest: every 400 names the field", () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ["missing model", { messages: [user] }, "model", /Missing required parameter: 'model'/],
    ["missing messages", { model: "m" }, "messages", /Missing required parameter: 'messages'/],
    ["model of wrong type", { model: 3, messages: [user] }, "model", /expected string, but got an integer/],
    ["empty model", { model: "", messages: [user] }, "model", /must not be empty/],
    ["messages not an array", { model: "m", messages: "hi" }, "messages", /expected array, but got a string/],
    ["empty messages", { model: "m", messages: [] }, "messages", /at least 1 item/],
    ["unknown role", { model: "m", messages: [user, { role: "bot", content: "x" }] }, "messages[1].role", /"bot"/],
    ["missing role", { model: "m", messages: [{ content: "x" }] }, "messages[0].role", /Missing required/],
    [
      "audio part",
      {
        model: "m",
        messages: [user, user, { role: "user", content: [{ type: "input_audio", input_audio: { data: "x" } }] }],
      },
      "messages[2].content[0].type",
      /Unsupported content part type 'input_audio': only text and image_url.*messages\[2\]\.content\[0\]\.type/,
    ],
    [
      "image part outside a user message",
      { model: "m", messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "x" } }] }] },
      "messages[0].content[0].type",
      /Unsupported content part type 'image_url': only text parts/,
    ],
    [
      "text part without text",
      { model: "m", messages: [{ role: "user", content: [{ type: "text" }] }] },
      "messages[0].content[0].text",
      /Missing required parameter/,
    ],
    [
      "content of wrong type",
      { model: "m", messages: [{ role: "user", content: 5 }] },
      "messages[0].content",
      /expected string or array, but got an integer/,
    ],
    [
      "tool message without tool_call_id",
      { model: "m", messages: [{ role: "tool", content: "x" }] },
      "messages[0].tool_call_id",
      /Missing required parameter/,
    ],
    [
      "assistant tool call without arguments",
      { model: "m", messages: [{ role: "assistant", tool_calls: [{ id: "a", function: { name: "n" } }] }] },
      "messages[0].tool_calls[0].function.arguments",
      /Missing required/,
    ],
    ["n > 1", { model: "m", messages: [user], n: 2 }, "n", /only n=1/],
    ["stream not boolean", { model: "m", messages: [user], stream: "yes" }, "stream", /expected boolean/],
    [
      "include_usage not boolean",
      { model: "m", messages: [user], stream_options: { include_usage: 1 } },
      "stream_options.include_usage",
      /expected boolean/,
    ],
    [
      "tool of another type",
      { model: "m", messages: [user], tools: [{ type: "custom", function: { name: "x" } }] },
      "tools[0].type",
      /"function"/,
    ],
    [
      "tool without a name",
      { model: "m", messages: [user], tools: [{ type: "function", function: {} }] },
      "tools[0].function.name",
      /Missing required/,
    ],
    [
      "duplicate tool names",
      {
        model: "m",
        messages: [user],
        tools: [
          { type: "function", function: { name: "a" } },
          { type: "function", function: { name: "a" } },
        ],
      },
      "tools[1].function.name",
      /duplicate/,
    ],
    [
      "bad tool_choice",
      { model: "m", messages: [user], tool_choice: "always" },
      "tool_choice",
      /"auto", "none", "required" or object/,
    ],
    [
      "tool_choice required without tools",
      { model: "m", messages: [user], tool_choice: "required" },
      "tool_choice",
      /requires 'tools'/,
    ],
    [
      "tool_choice naming an unknown tool",
      {
        model: "m",
        messages: [user],
        tools: [{ type: "function", function: { name: "a" } }],
        tool_choice: { type: "function", function: { name: "b" } },
      },
      "tool_choice.function.name",
      /no tool named 'b'/,
    ],
    ["bad reasoning_effort", { model: "m", messages: [user], reasoning_effort: "ultra" }, "reasoning_effort", /"max"/],
    ["negative max_tokens", { model: "m", messages: [user], max_tokens: -1 }, "max_tokens", /expected a number > 0/],
  ];

  it.each(cases)("%s", (_name, body, param, message) => {
    const error = rejection(body);
    expect(error.code).toBe("invalid_request");
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(`'${param}'`);
  });

  it("bounds what a rejection echoes: an over-long model, a megabyte role, deep nesting", () => {
    expect(rejection({ model: "m".repeat(257), messages: [user] }).param).toBe("model");
    const role = rejection({ model: "m", messages: [{ role: "r".repeat(1_000_000), content: "x" }] });
    expect(role.param).toBe("messages[0].role");
    expect(role.message.length).toBeLessThan(500);
    const deep = rejection({
      model: "m",
      messages: [user],
      metadata: JSON.parse(`${"[".repeat(100)}${"]".repeat(100)}`),
    });
    expect(deep.detail).toBe("nesting_too_deep");
  });

  it("rejects a body that is not an object", () => {
    for (const body of [null, [], "x", 1]) expect(rejection(body).code).toBe("invalid_request");
  });
});

describe("parseChatCompletionRequest: parameters without effect keep OpenAI's types", () => {
  const base = { model: "m", messages: [user] };

  it("accepts their valid values (null too), still reported as ignored", () => {
    const { ignoredParams } = parseChatCompletionRequest({
      ...base,
      temperature: 0,
      top_p: 1,
      frequency_penalty: 2,
      presence_penalty: -2,
      seed: -7,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 0,
      store: true,
      service_tier: "flex",
      prompt_cache_key: "k",
      safety_identifier: "s",
      verbosity: "high",
      modalities: ["text", "audio"],
      audio: { voice: "alloy" },
      prediction: { type: "content" },
      functions: [{ name: "f" }],
      function_call: "none",
      user: null,
    });
    // Every checked key is exercised here (one added to the schema without a case fails this).
    expect(ignoredParams).toEqual(CHECKED_IGNORED_KEYS);
  });

  it.each([
    [{ temperature: "hot" }, "temperature", "Invalid type for 'temperature': expected number, but got a string."],
    [{ temperature: 2.1 }, "temperature", "Invalid value for 'temperature': expected a number <= 2."],
    [{ temperature: -1 }, "temperature", "Invalid value for 'temperature': expected a number >= 0."],
    [{ top_p: 1.5 }, "top_p", "Invalid value for 'top_p': expected a number <= 1."],
    [{ frequency_penalty: -3 }, "frequency_penalty", "Invalid value for 'frequency_penalty': expected a number >= -2."],
    [{ presence_penalty: "1" }, "presence_penalty", undefined],
    [{ seed: "x" }, "seed", "Invalid type for 'seed': expected number, but got a string."],
    [{ seed: 1.5 }, "seed", "Invalid type for 'seed': expected int, but got a number."],
    [{ logit_bias: { "50256": "x" } }, "logit_bias.50256", undefined],
    [{ logit_bias: [1] }, "logit_bias", undefined],
    [{ logprobs: "true" }, "logprobs", undefined],
    [{ top_logprobs: 21 }, "top_logprobs", "Invalid value for 'top_logprobs': expected a number <= 20."],
    [{ store: "no" }, "store", undefined],
    [{ service_tier: 1 }, "service_tier", undefined],
    [{ prompt_cache_key: 1 }, "prompt_cache_key", undefined],
    [{ safety_identifier: {} }, "safety_identifier", undefined],
    [{ verbosity: 2 }, "verbosity", undefined],
    [{ modalities: ["text", 1] }, "modalities[1]", undefined],
    [{ audio: "alloy" }, "audio", undefined],
    [{ prediction: [] }, "prediction", undefined],
    [{ functions: [1] }, "functions[0]", undefined],
    [{ function_call: 1 }, "function_call", undefined],
    [{ user: 1 }, "user", undefined],
    [{ metadata: { a: 1 } }, "metadata.a", undefined],
    [{ max_completion_tokens: "9" }, "max_completion_tokens", undefined],
  ])("refuses %j naming %s", (extra, param, message) => {
    const error = rejection({ ...base, ...extra });
    expect([error.status, error.code, error.param]).toEqual([400, "invalid_request", param]);
    if (message !== undefined) expect(error.message).toBe(message);
  });
});

describe("formatParamPath", () => {
  it("uses OpenAI's dotted/bracketed notation", () => {
    expect(formatParamPath(["messages", 2, "content", 0, "type"])).toBe("messages[2].content[0].type");
    expect(formatParamPath(["model"])).toBe("model");
  });
});
