/**
 * Anthropic golden SSE: test/fixtures/<events>.events.jsonl translated by messagesTranslation + streamTurn
 * (the server's own body) must equal test/fixtures/<name>.sse byte for byte (UPDATE_GOLDEN=1 regenerates), and the
 * real Anthropic SDK, fed those bytes through an injected fetch, must read them as intended.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { streamTurn } from "../../src/surfaces/kit/translate.js";
import { messagesTranslation, messagesWire } from "../../src/surfaces/messages/events.js";
import { FIXTURES_DIR, finalArguments, replay } from "./scenarios.js";

const update = process.env.UPDATE_GOLDEN === "1";

const SCENARIOS = [
  { name: "anthropic-text", events: "anthropic-text", reasoning: false },
  { name: "anthropic-tool-use", events: "anthropic-tool-use", reasoning: true },
  { name: "anthropic-error-mid-stream", events: "backend-error-mid-stream", reasoning: false },
  { name: "anthropic-web-search", events: "anthropic-web-search", reasoning: false },
  { name: "anthropic-tool-streamed-2k", events: "tool-call-streamed-2k", reasoning: false },
];

async function run(events: string, reasoning: boolean): Promise<{ sse: string; released: boolean }> {
  const source = replay(events);
  const translation = messagesTranslation({
    id: "msg_golden1",
    model: "claude-sonnet-5-5",
    reasoning,
    sign: (text) => `sig:${text.length}`,
  });
  const sse = await new Response(streamTurn(source.events, translation, messagesWire(0))).text();
  return { sse, released: source.released() };
}

describe("Anthropic golden SSE (test/fixtures/anthropic-*.sse)", () => {
  it.each(SCENARIOS)("$name", async ({ name, events, reasoning }) => {
    const { sse, released } = await run(events, reasoning);
    const file = `${FIXTURES_DIR}${name}.sse`;
    if (update || !existsSync(file)) {
      if (!update) throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1`);
      writeFileSync(file, sse);
    }
    expect(sse).toBe(readFileSync(file, "utf8"));
    expect(released).toBe(true);
  });
});

function client(name: string): Anthropic {
  const body = readFileSync(`${FIXTURES_DIR}${name}.sse`, "utf8");
  const fetch = async () => new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
  return new Anthropic({ apiKey: "test", baseURL: "http://127.0.0.1:9", fetch, maxRetries: 0 });
}

const params = { model: "claude-sonnet-5-5", max_tokens: 1024, messages: [{ role: "user" as const, content: "hi" }] };

describe("the Anthropic SDK reads the golden streams", () => {
  it("gets a 2 KB tool input in at least 20 input_json events that add up to the final arguments", async () => {
    const stream = client("anthropic-tool-streamed-2k").messages.stream(params);
    const pieces: string[] = [];
    stream.on("inputJson", (partial) => pieces.push(partial));
    const message = await stream.finalMessage();
    const final = finalArguments("tool-call-streamed-2k");
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    expect(pieces.join("")).toBe(final);
    const tool = message.content.find((block) => block.type === "tool_use");
    expect(tool?.type === "tool_use" && tool.input).toEqual(JSON.parse(final));
  });

  it("accumulates a text turn with its stop reason and usage", async () => {
    const message = await client("anthropic-text").messages.stream(params).finalMessage();
    expect(message.content).toEqual([{ type: "text", text: 'Hello, world!\nSecond line with "quotes".' }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ input_tokens: 21, output_tokens: 9 });
  });

  it("accumulates thinking with its signature, text and two tool calls", async () => {
    const message = await client("anthropic-tool-use").messages.stream(params).finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "thinking", thinking: "The user wants the file. I will read it.", signature: "sig:40" },
      { type: "text", text: "Let me read that file." },
      { type: "tool_use", id: "toolu_call_read_1", name: "Read", input: { file_path: "/tmp/grüße.txt" } },
      { type: "tool_use", id: "toolu_call_bash_2", name: "Bash", input: { command: "echo 42" } },
    ]);
  });

  it("accumulates a web search turn: server_tool_use, results, cited text and web_search_requests (#27)", async () => {
    const message = await client("anthropic-web-search").messages.stream(params).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["server_tool_use", "web_search_tool_result", "text"]);
    const [use, result, text] = message.content;
    expect(use).toMatchObject({ name: "web_search", input: { query: "node 22 release date" } });
    expect(result).toMatchObject({ tool_use_id: use?.type === "server_tool_use" ? use.id : "" });
    expect(result?.type === "web_search_tool_result" && Array.isArray(result.content) && result.content[1]).toEqual({
      type: "web_search_result",
      url: "https://github.example/nodejs/release",
      title: "Release schedule",
      page_age: null,
      encrypted_content: expect.any(String),
    });
    expect(text).toMatchObject({
      text: "Node 22 came out in April 2024 (https://nodejs.example/blog/22).",
      citations: [
        {
          type: "web_search_result_location",
          url: "https://nodejs.example/blog/22",
          title: "Node.js 22 released",
          cited_text: "Node.js 22 was released in April 2024.",
        },
      ],
    });
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });

  it("surfaces the mid-stream error event as an APIError carrying Anthropic's error type", async () => {
    const stream = client("anthropic-error-mid-stream").messages.stream(params);
    const error = await stream.finalMessage().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(String((error as Error).message)).toContain("overloaded_error");
    expect(String((error as Error).message)).toContain("The Cursor stream closed unexpectedly.");
  });
});
