import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { parseResponsesRequest } from "./parse.js";

const valid = { model: "gpt-5", input: "hi" };

function rejection(body: unknown): ProxyError {
  try {
    parseResponsesRequest(body);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("parameters Cursor has no equivalent of: accepted, ignored, held to OpenAI's types", () => {
  it("accepts the valid values (null too) and reports them as ignored", () => {
    const { ignoredParams } = parseResponsesRequest({
      ...valid,
      temperature: 2,
      top_p: 0,
      top_logprobs: 20,
      max_output_tokens: 100,
      max_tool_calls: 3,
      truncation: "auto",
      service_tier: "flex",
      prompt_cache_key: "k",
      prompt_cache_retention: "24h",
      safety_identifier: "s",
      user: "u",
      prompt: { id: "pmpt_1", variables: { a: "b" } },
      conversation: "conv_1",
      stream_options: { include_obfuscation: false },
      text: { format: { type: "text" }, verbosity: "low" },
    });
    expect(ignoredParams).toEqual([
      "temperature",
      "top_p",
      "top_logprobs",
      "max_tool_calls",
      "truncation",
      "service_tier",
      "prompt_cache_key",
      "prompt_cache_retention",
      "safety_identifier",
      "user",
      "prompt",
      "conversation",
      "stream_options",
      "text",
    ]);
    const nulls = { temperature: null, top_p: null, top_logprobs: null, truncation: null, conversation: null };
    expect(parseResponsesRequest({ ...valid, ...nulls }).ignoredParams).toEqual([]);
    expect(() => parseResponsesRequest({ ...valid, conversation: { id: "conv_1" } })).not.toThrow();
  });

  it.each([
    [{ temperature: "hot" }, "temperature", "Invalid type for 'temperature': expected number, but got a string."],
    [{ temperature: 2.5 }, "temperature", "Invalid value for 'temperature': expected a number <= 2."],
    [{ temperature: -1 }, "temperature", "Invalid value for 'temperature': expected a number >= 0."],
    [{ top_p: 1.1 }, "top_p", "Invalid value for 'top_p': expected a number <= 1."],
    [{ top_logprobs: 21 }, "top_logprobs", "Invalid value for 'top_logprobs': expected a number <= 20."],
    [{ top_logprobs: 1.5 }, "top_logprobs", "Invalid type for 'top_logprobs': expected int, but got a number."],
    [{ max_output_tokens: "9" }, "max_output_tokens", undefined],
    [{ max_tool_calls: "3" }, "max_tool_calls", undefined],
    [{ truncation: false }, "truncation", "Invalid type for 'truncation': expected string, but got a boolean."],
    [{ service_tier: 1 }, "service_tier", undefined],
    [{ prompt_cache_key: {} }, "prompt_cache_key", undefined],
    [{ prompt_cache_retention: 24 }, "prompt_cache_retention", undefined],
    [{ safety_identifier: [] }, "safety_identifier", undefined],
    [{ user: 7 }, "user", undefined],
    [{ prompt: "p" }, "prompt", undefined],
    [{ conversation: 1 }, "conversation", undefined],
    [{ stream_options: { include_obfuscation: "no" } }, "stream_options.include_obfuscation", undefined],
    [{ metadata: { a: 1 } }, "metadata.a", undefined],
    [{ text: { verbosity: 1 } }, "text.verbosity", undefined],
  ])("refuses %j naming %s", (extra, param, message) => {
    const error = rejection({ ...valid, ...extra });
    expect([error.status, error.code, error.param]).toEqual([400, "invalid_request", param]);
    if (message !== undefined) expect(error.message).toBe(message);
  });
});

describe("text.format json_schema", () => {
  const format = (value: Record<string, unknown>) => ({ ...valid, text: { format: value } });

  it("needs a name and a schema object, as OpenAI does", () => {
    const ok = { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true, description: null };
    expect(parseResponsesRequest(format(ok)).request.text?.format).toEqual(ok);
    const noSchema = rejection(format({ type: "json_schema", name: "answer" }));
    expect([noSchema.status, noSchema.param, noSchema.message]).toEqual([
      400,
      "text.format.schema",
      "Missing required parameter: 'text.format.schema'.",
    ]);
    const noName = rejection(format({ type: "json_schema", schema: { type: "object" } }));
    expect([noName.status, noName.param, noName.message]).toEqual([
      400,
      "text.format.name",
      "Missing required parameter: 'text.format.name'.",
    ]);
    expect(rejection(format({ type: "json_schema", name: "", schema: {} })).param).toBe("text.format.name");
    expect(rejection(format({ type: "json_schema", name: "a", schema: "{}" })).param).toBe("text.format.schema");
    expect(rejection(format({ type: "json_schema", name: "a", schema: {}, strict: "yes" })).param).toBe(
      "text.format.strict",
    );
  });

  it("leaves the other formats as they were", () => {
    expect(() => parseResponsesRequest(format({ type: "text" }))).not.toThrow();
    expect(() => parseResponsesRequest(format({ type: "json_object" }))).not.toThrow();
    expect(() => parseResponsesRequest({ ...valid, text: { format: null } })).not.toThrow();
  });
});
