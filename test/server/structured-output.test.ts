/**
 * Structured output as the real SDKs ask for it, on every HTTP door: chat `response_format`, Responses `text.format`
 * and Messages `output_config.format` (and the beta's top-level `output_format`). Cursor has no structured-output
 * mode, so each door turns the format into the same instruction (src/surfaces/kit/json-output.ts), which must reach
 * the Run as a system message carrying the schema, and says so in `x-cursor-bridge-warnings`. The Responses object
 * echoes the requested `text` as OpenAI does.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { TurnRequest } from "../../src/backend/types.js";
import { appWithRecorder } from "./doors.js";

const SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, celsius: { type: "number" } },
  required: ["city", "celsius"],
  additionalProperties: false,
};

/** The SDKs' requests go to the app in-process (no socket), with the runs it started. */
function clients() {
  const target = appWithRecorder();
  const fetch = (url: string | URL | Request, init?: RequestInit) =>
    Promise.resolve(target.app.request(url instanceof Request ? url : String(url), init));
  const openai = new OpenAI({ baseURL: "http://127.0.0.1/v1", apiKey: "k", maxRetries: 0, fetch });
  const anthropic = new Anthropic({ baseURL: "http://127.0.0.1", apiKey: "k", maxRetries: 0, fetch });
  return { openai, anthropic, runs: target.runs };
}

/** The instructions the turn sent to Cursor (its system messages, joined). */
function systemText(run: TurnRequest | undefined): string {
  return (run?.messages ?? []).flatMap((message) => (message.role === "system" ? [message.content] : [])).join("\n");
}

function expectSchemaInstruction(run: TurnRequest | undefined): void {
  const instruction = systemText(run);
  expect(instruction).toContain("conforms to this JSON Schema");
  expect(instruction).toContain(JSON.stringify(SCHEMA));
  expect(instruction).toContain("Output only the JSON itself");
}

describe("structured output reaches Cursor as an instruction on every door", () => {
  it("chat: response_format json_schema", async () => {
    const { openai, runs } = clients();
    const { response } = await openai.chat.completions
      .create({
        model: "auto",
        messages: [{ role: "user", content: "Weather in Oslo?" }],
        response_format: { type: "json_schema", json_schema: { name: "weather", schema: SCHEMA, strict: true } },
      })
      .withResponse();
    expectSchemaInstruction(runs[0]);
    expect(systemText(runs[0])).toContain('named "weather"');
    expect(response.headers.get("x-cursor-bridge-warnings")).toContain("response_format json_schema is approximated");
  });

  it("responses: text.format json_schema, echoed in the response", async () => {
    const { openai, runs } = clients();
    const format = { type: "json_schema" as const, name: "weather", schema: SCHEMA, strict: true };
    const { data, response } = await openai.responses
      .create({ model: "auto", input: "Weather in Oslo?", instructions: "Be brief.", text: { format } })
      .withResponse();
    expectSchemaInstruction(runs[0]);
    expect(systemText(runs[0]).startsWith("Be brief.")).toBe(true);
    expect(response.headers.get("x-cursor-bridge-warnings")).toContain("text.format json_schema is approximated");
    expect(data.text?.format).toEqual(format);
  });

  it("responses: text.format json_object, and a plain request keeps format text", async () => {
    const { openai, runs } = clients();
    const json = await openai.responses.create({
      model: "auto",
      input: "Weather?",
      text: { format: { type: "json_object" }, verbosity: "low" },
    });
    expect(systemText(runs[0])).toContain("Respond with a single valid JSON object.");
    expect(json.text).toEqual({ format: { type: "json_object" }, verbosity: "low" });
    const plain = await openai.responses.create({ model: "auto", input: "Weather?" });
    expect(systemText(runs[1])).not.toContain("JSON");
    expect(plain.text).toEqual({ format: { type: "text" } });
  });

  it("messages: output_config.format, streamed and not", async () => {
    const { anthropic, runs } = clients();
    const { response } = await anthropic.messages
      .create({
        model: "auto",
        max_tokens: 200,
        system: "Be brief.",
        messages: [{ role: "user", content: "Weather in Oslo?" }],
        output_config: { format: { type: "json_schema", schema: SCHEMA } },
      })
      .withResponse();
    expectSchemaInstruction(runs[0]);
    expect(systemText(runs[0]).startsWith("Be brief.")).toBe(true);
    expect(response.headers.get("x-cursor-bridge-warnings")).toContain(
      "output_config.format json_schema is approximated",
    );
    await anthropic.messages
      .stream({
        model: "auto",
        max_tokens: 200,
        messages: [{ role: "user", content: "Weather in Bergen?" }],
        output_config: { format: { type: "json_schema", schema: SCHEMA } },
      })
      .finalMessage();
    expectSchemaInstruction(runs[1]);
  });

  it("messages: the beta's output_format, and a format that is not json_schema is a 400 naming it", async () => {
    const { anthropic, runs } = clients();
    await anthropic.messages.create({
      model: "auto",
      max_tokens: 200,
      messages: [{ role: "user", content: "Weather in Oslo?" }],
      output_format: { type: "json_schema", schema: SCHEMA },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expectSchemaInstruction(runs[0]);
    const wrong = anthropic.messages.create({
      model: "auto",
      max_tokens: 200,
      messages: [{ role: "user", content: "Weather?" }],
      output_config: { format: { type: "xml" } },
    } as unknown as Anthropic.MessageCreateParamsNonStreaming);
    await expect(wrong).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("output_config.format"),
    });
    expect(runs).toHaveLength(1);
  });
});
