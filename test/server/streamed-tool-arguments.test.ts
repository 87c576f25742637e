/**
 * A client tool's arguments reach the client as Cursor forms them (cursor-protocol-addendum-3 §2): the emulator sends
 * a 2 KB argument object as cumulative `partial_tool_call` snapshots, and each door streams the suffixes, read here
 * by the real SDKs: openai (chat and responses), Anthropic (`inputJson` events). The pieces add up to the final
 * arguments byte for byte.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const lines = Array.from({ length: 50 }, (_, i) => `${i + 1}. grüße — the quick brown fox "${i}"`).join("\n");
const ARGS = { path: "/tmp/notes.md", content: lines };
const FINAL = JSON.stringify(ARGS);
const PROMPT = `[[emu:tool write_notes ${FINAL}]]`;
const SCHEMA = {
  type: "object",
  properties: { path: { type: "string" }, content: { type: "string" } },
  required: ["path", "content"],
};

describe("tool arguments streamed as they form, through the real SDKs", () => {
  const sdk = useSdkStack();

  it("the argument object is over 2 KB", () => {
    expect(Buffer.byteLength(FINAL)).toBeGreaterThan(2048);
  });

  it("chat: tool_calls[0].function.arguments deltas", async () => {
    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: PROMPT }],
      tools: [{ type: "function", function: { name: "write_notes", parameters: SCHEMA } }],
    });
    const pieces: string[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        expect(call.index).toBe(0);
        if (call.function?.arguments) pieces.push(call.function.arguments);
      }
      finish ??= chunk.choices[0]?.finish_reason;
    }
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    expect(pieces.join("")).toBe(FINAL);
    expect(finish).toBe("tool_calls");
  });

  it("responses: response.function_call_arguments.delta, then .done with the same text", async () => {
    const stream = await sdk.openai.responses.create({
      model: "auto",
      stream: true,
      input: PROMPT,
      tools: [{ type: "function", name: "write_notes", parameters: SCHEMA, strict: false }],
    });
    const pieces: string[] = [];
    let done: string | undefined;
    for await (const event of stream) {
      if (event.type === "response.function_call_arguments.delta") pieces.push(event.delta);
      if (event.type === "response.function_call_arguments.done") done = event.arguments;
    }
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    expect(pieces.join("")).toBe(FINAL);
    expect(done).toBe(FINAL);
  });

  it("messages: input_json_delta pieces after content_block_start (the SDK's inputJson events)", async () => {
    const stream = sdk.anthropic.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      messages: [{ role: "user", content: PROMPT }],
      tools: [{ name: "write_notes", input_schema: SCHEMA as Anthropic.Tool.InputSchema }],
    });
    const pieces: string[] = [];
    stream.on("inputJson", (partial) => pieces.push(partial));
    const message = await stream.finalMessage();
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    expect(pieces.join("")).toBe(FINAL);
    expect(message.stop_reason).toBe("tool_use");
    const tool = message.content.find((block) => block.type === "tool_use");
    expect(tool?.type === "tool_use" && tool.input).toEqual(ARGS);
  });

  it("non-streaming answers carry the same arguments", async () => {
    const completion = await sdk.openai.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: PROMPT }],
      tools: [{ type: "function", function: { name: "write_notes", parameters: SCHEMA } }],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === "function" && call.function.arguments).toBe(FINAL);
  });

  it("[[emu:tool-chunks N]] sets the piece size", async () => {
    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      stream: true,
      messages: [{ role: "user", content: `[[emu:tool-chunks 1000]] ${PROMPT}` }],
      tools: [{ type: "function", function: { name: "write_notes", parameters: SCHEMA } }],
    });
    const pieces: string[] = [];
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.arguments) pieces.push(call.function.arguments);
      }
    }
    expect(pieces.length).toBe(Math.ceil(Array.from(FINAL).length / 1000));
    expect(pieces.join("")).toBe(FINAL);
  });
});
