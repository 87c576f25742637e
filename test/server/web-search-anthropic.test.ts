/**
 * Issue #27 against the real Anthropic SDK: the `web_search_20250305` / `web_fetch_20250910` server tools through the
 * bridge to the emulator, which "runs" approved searches offline. Stream and non-stream, max_uses, a blocked domain,
 * no tool offered, and the server blocks re-sent by the client in the next request.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { useSdkStack } from "../support/sdk-clients.js";

const MODEL = "claude-4.5-sonnet";
const URL_1 = "https://emulator.invalid/search/cursor-bridge-release/1";

const search = (extra: Partial<Anthropic.WebSearchTool20250305> = {}): Anthropic.WebSearchTool20250305 => ({
  type: "web_search_20250305",
  name: "web_search",
  ...extra,
});

describe("Anthropic SDK web search through cursor-bridge + emulator", () => {
  const sdk = useSdkStack();

  it("streams server_tool_use, web_search_tool_result and a cited text the SDK accumulates", async () => {
    const before = sdk.stack.emulator.stats().webSearches;
    const stream = sdk.anthropic.messages.stream({
      model: MODEL,
      max_tokens: 1024,
      tools: [search({ max_uses: 3 })],
      messages: [{ role: "user", content: "[[emu:web-search cursor bridge release]]" }],
    });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["server_tool_use", "web_search_tool_result", "text"]);
    const [use, result, text] = message.content;
    if (use?.type !== "server_tool_use" || result?.type !== "web_search_tool_result" || text?.type !== "text") {
      throw new Error("unexpected blocks");
    }
    expect(use.id).toMatch(/^srvtoolu_/);
    expect(use.name).toBe("web_search");
    expect(use.input).toEqual({ query: "cursor bridge release" });
    expect(result.tool_use_id).toBe(use.id);
    if (!Array.isArray(result.content)) throw new Error("expected results");
    expect(result.content.map((item) => item.url)).toEqual([URL_1, URL_1.replace(/1$/, "2"), URL_1.replace(/1$/, "3")]);
    expect(result.content[0]).toMatchObject({ type: "web_search_result", title: "Result 1 for cursor bridge release" });
    expect(result.content[0]?.encrypted_content).not.toBe("");
    expect(text.text).toContain(URL_1);
    expect(text.citations?.map((citation) => citation.type)).toEqual([
      "web_search_result_location",
      "web_search_result_location",
      "web_search_result_location",
    ]);
    expect(text.citations?.[0]).toMatchObject({ url: URL_1, title: "Result 1 for cursor bridge release" });
    expect(message.usage.server_tool_use?.web_search_requests).toBe(1);
    expect(sdk.stack.emulator.stats().webSearches).toBe(before + 1);

    // Claude Code re-sends the server blocks: accepted, and the conversation goes on.
    const next = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      tools: [search({ max_uses: 3 })],
      messages: [
        { role: "user", content: "[[emu:web-search cursor bridge release]]" },
        { role: "assistant", content: message.content },
        { role: "user", content: "[[emu:recall]]" },
      ],
    });
    expect(next.content.map((block) => (block.type === "text" ? block.text : "")).join("")).toBe(
      "First message: [[emu:web-search cursor bridge release]]",
    );
  });

  it("answers non-streaming; the search past max_uses gets max_uses_exceeded and the model goes on", async () => {
    const before = sdk.stack.emulator.stats().webSearches;
    const message = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      tools: [search({ max_uses: 1 })],
      messages: [{ role: "user", content: "[[emu:web-search first]] [[emu:web-search second]]" }],
    });
    const results = message.content.filter((block) => block.type === "web_search_tool_result");
    expect(results).toHaveLength(2);
    expect(Array.isArray(results[0]?.content)).toBe(true);
    expect(results[1]?.content).toEqual({ type: "web_search_tool_result_error", error_code: "max_uses_exceeded" });
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.server_tool_use?.web_search_requests).toBe(1);
    expect(sdk.stack.emulator.stats().webSearches).toBe(before + 1);
  });

  it("refuses a blocked domain and a search nobody offered; nothing runs", async () => {
    const before = sdk.stack.emulator.stats();
    const blocked = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      tools: [search({ blocked_domains: ["evil.test"] })],
      messages: [{ role: "user", content: "[[emu:web-search site:evil.test secrets]]" }],
    });
    const result = blocked.content.find((block) => block.type === "web_search_tool_result");
    expect(result?.content).toEqual({ type: "web_search_tool_result_error", error_code: "invalid_tool_input" });
    const none = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      messages: [{ role: "user", content: "[[emu:web-search anything]]" }],
    });
    // The refusal stays between the bridge and Cursor: no server tool block for a tool nobody offered, only text.
    expect(none.content.map((block) => block.type)).toEqual(["text"]);
    const text = none.content.map((block) => (block.type === "text" ? block.text : "")).join("");
    expect(text).toMatch(/was rejected: The request offered no web search tool/);
    expect(none.usage.server_tool_use).toBeUndefined();
    expect(sdk.stack.emulator.stats().webSearches).toBe(before.webSearches);
  });

  it("fetches with web_fetch_20250910 into a web_fetch_tool_result document", async () => {
    const before = sdk.stack.emulator.stats().webFetches;
    const message = await sdk.anthropic.messages.create({
      model: MODEL,
      max_tokens: 1024,
      tools: [{ type: "web_fetch_20250910", name: "web_fetch", allowed_domains: ["docs.example.test"] }],
      messages: [
        {
          role: "user",
          content: "[[emu:web-fetch https://docs.example.test/a]] [[emu:web-fetch https://other.test/]]",
        },
      ],
    });
    const results = message.content.filter((block) => block.type === "web_fetch_tool_result");
    expect(results[0]?.content).toMatchObject({
      type: "web_fetch_result",
      url: "https://docs.example.test/a",
      content: { type: "document", source: { type: "text", media_type: "text/plain" } },
    });
    expect(results[1]?.content).toEqual({ type: "web_fetch_tool_result_error", error_code: "url_not_allowed" });
    expect(message.usage.server_tool_use?.web_fetch_requests).toBe(1);
    expect(sdk.stack.emulator.stats().webFetches).toBe(before + 1);
  });
});
