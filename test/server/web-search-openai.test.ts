/**
 * Issue #27 against the real openai SDK: the Responses `web_search` tool and Chat Completions `web_search_options`
 * through the bridge to the emulator, stream and non-stream; without them the search is rejected and nothing runs.
 */
import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const URL_1 = "https://emulator.invalid/search/weather-in-lyon/1";
const ASK = "[[emu:web-search weather in lyon]]";

describe("openai SDK web search through cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("Responses, streamed: a web_search_call with sources, its events, and url_citation annotations", async () => {
    const before = sdk.stack.emulator.stats().webSearches;
    const stream = sdk.openai.responses.stream({
      model: "auto",
      input: ASK,
      tools: [{ type: "web_search" }],
      include: ["web_search_call.action.sources"],
    });
    const types: string[] = [];
    stream.on("event", (event) => types.push(event.type));
    const response = await stream.finalResponse();
    const call = response.output.find((item) => item.type === "web_search_call");
    expect(call).toMatchObject({ status: "completed", action: { type: "search", query: "weather in lyon" } });
    expect(call?.type === "web_search_call" && call.action.type === "search" && call.action.sources?.[0]).toEqual({
      type: "url",
      url: URL_1,
    });
    expect(types).toEqual(
      expect.arrayContaining([
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.output_text.annotation.added",
      ]),
    );
    const message = response.output.find((item) => item.type === "message");
    const part = message?.type === "message" ? message.content[0] : undefined;
    if (part?.type !== "output_text") throw new Error("expected output_text");
    expect(part.annotations).toHaveLength(3);
    const first = part.annotations[0];
    expect(first).toMatchObject({ type: "url_citation", url: URL_1, title: "Result 1 for weather in lyon" });
    if (first?.type !== "url_citation") throw new Error("expected a url_citation");
    expect(part.text.slice(first.start_index, first.end_index)).toBe(URL_1);
    expect(sdk.stack.emulator.stats().webSearches).toBe(before + 1);
  });

  it("Responses, non-streamed with web_search_preview: sources only when include asks", async () => {
    const response = await sdk.openai.responses.create({
      model: "auto",
      input: ASK,
      tools: [{ type: "web_search_preview" }],
    });
    const call = response.output.find((item) => item.type === "web_search_call");
    expect(call).toMatchObject({ status: "completed", action: { type: "search", query: "weather in lyon" } });
    expect(call?.type === "web_search_call" && call.action.type === "search" && call.action.sources).toBeUndefined();
    expect(response.output_text).toContain(URL_1);
  });

  it("Responses without a web_search tool: the search is rejected, no web_search_call item, nothing runs", async () => {
    const before = sdk.stack.emulator.stats().webSearches;
    const response = await sdk.openai.responses.create({ model: "auto", input: ASK });
    expect(response.output.map((item) => item.type)).toEqual(["message"]);
    expect(response.output.flatMap((item) => (item.type === "message" ? item.content : []))).toMatchObject([
      { annotations: [] },
    ]);
    expect(response.output_text).toMatch(/was rejected: The request offered no web search tool/);
    expect(sdk.stack.emulator.stats().webSearches).toBe(before);
  });

  it("Chat Completions, streamed: url_citation annotations arrive in the final delta", async () => {
    const before = sdk.stack.emulator.stats().webSearches;
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const stream = await sdk.openai.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: ASK }],
      web_search_options: {},
      stream: true,
    });
    for await (const chunk of stream) chunks.push(chunk);
    const final = chunks.findLast((chunk) => chunk.choices[0]?.finish_reason != null);
    const delta = final?.choices[0]?.delta as {
      annotations?: OpenAI.Chat.Completions.ChatCompletionMessage.Annotation[];
    };
    expect(delta.annotations?.[0]).toMatchObject({ type: "url_citation", url_citation: { url: URL_1 } });
    const content = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("");
    const citation = delta.annotations?.[0]?.url_citation;
    expect(citation && content.slice(citation.start_index, citation.end_index)).toBe(URL_1);
    expect(sdk.stack.emulator.stats().webSearches).toBe(before + 1);
  });

  it("Chat Completions, non-streamed: message.annotations; without web_search_options the search is refused", async () => {
    const completion = await sdk.openai.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: ASK }],
      web_search_options: { search_context_size: "low" },
    });
    const message = completion.choices[0]?.message;
    expect(message?.annotations?.map((annotation) => annotation.url_citation.url)).toEqual([
      URL_1,
      URL_1.replace(/1$/, "2"),
      URL_1.replace(/1$/, "3"),
    ]);
    const before = sdk.stack.emulator.stats().webSearches;
    const refused = await sdk.openai.chat.completions.create({
      model: "auto",
      messages: [{ role: "user", content: ASK }],
    });
    expect(refused.choices[0]?.message.content).toMatch(/was rejected/);
    expect(refused.choices[0]?.message.annotations).toBeUndefined();
    expect(sdk.stack.emulator.stats().webSearches).toBe(before);
  });
});
