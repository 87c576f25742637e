import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { countInputTokens, IMAGE_TOKENS } from "./count-tokens.js";
import { parseMessagesRequest } from "./parse.js";
import { toEngineRequest } from "./translate.js";

const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

const translate = (body: Record<string, unknown>) =>
  toEngineRequest(parseMessagesRequest({ model: "claude-opus-5-5", max_tokens: 100, ...body }).request);

describe("toEngineRequest", () => {
  it("turns a tool round trip with a trailing system message into tool + system messages", () => {
    const { request, warnings } = translate({
      system: [
        { type: "text", text: "You are Claude Code." },
        { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      ],
      messages: [
        { role: "user", content: "run echo" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should run it.", signature: "sig-1" },
            { type: "redacted_thinking", data: "opaque-data" },
            { type: "text", text: "Running." },
            { type: "tool_use", id: "toolu_call_1", name: "Bash", input: { command: "echo hi" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_call_1", content: "hi\n" },
            {
              type: "tool_result",
              tool_use_id: "toolu_call_2",
              content: [{ type: "text", text: "exit 1" }],
              is_error: true,
            },
          ],
        },
        { role: "system", content: [{ type: "text", text: "<system-reminder>todo list</system-reminder>" }] },
      ],
    });
    expect(warnings).toEqual([]);
    expect(request.instructions).toEqual(["You are Claude Code.", "Be brief."]);
    expect(request.messages).toEqual([
      { role: "user", parts: [{ type: "text", text: "run echo" }] },
      {
        role: "assistant",
        text: "Running.",
        reasoning: [
          { text: "I should run it.", opaque: "sig-1" },
          { text: "", opaque: "opaque-data" },
        ],
        toolCalls: [{ id: "call_1", name: "Bash", arguments: '{"command":"echo hi"}' }],
      },
      {
        role: "tool",
        toolCallId: "call_1",
        content: "hi\n",
        isError: false,
        param: "messages.2.content.0.tool_use_id",
      },
      {
        role: "tool",
        toolCallId: "call_2",
        content: "exit 1",
        isError: true,
        param: "messages.2.content.1.tool_use_id",
      },
      { role: "system", text: "<system-reminder>todo list</system-reminder>" },
    ]);
  });

  it("decodes base64 images and trusts the bytes over the declared media type", () => {
    const { request } = translate({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image", source: { type: "base64", media_type: "image/jpeg", data: PNG_1PX } },
          ],
        },
      ],
    });
    const message = request.messages[0];
    expect(message?.role).toBe("user");
    const image = message?.role === "user" ? message.parts[1] : undefined;
    expect(image?.type === "image" && image.mimeType).toBe("image/png");
    expect(image?.type === "image" && Array.from(image.data.slice(0, 4))).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it("rejects image data that is not an image, naming the field", () => {
    const body = {
      messages: [
        {
          role: "user",
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "aGVsbG8=" } }],
        },
      ],
    };
    expect(() => translate(body)).toThrow(ProxyError);
    expect(() => translate(body)).toThrow(
      "'messages.0.content.0.source.data': the image is not PNG, JPEG, GIF or WebP",
    );
  });

  it("maps tools, tool_choice and thinking, with warnings for what is approximated", () => {
    const tool = { name: "Bash", description: "Runs", input_schema: { type: "object", additionalProperties: false } };
    const base = {
      messages: [{ role: "user", content: "x" }],
      tools: [
        tool,
        { type: "code_execution_20250825", name: "code_execution" },
        { type: "web_search_20250305", name: "web_search", max_uses: 2, blocked_domains: ["x.test"] },
      ],
    };
    const any = translate({ ...base, tool_choice: { type: "any" }, thinking: { type: "adaptive" } });
    expect(any.request.tools).toEqual([
      { name: "Bash", description: "Runs", inputSchema: { type: "object", additionalProperties: false } },
    ]);
    expect(any.request.options).toEqual({
      reasoning: true,
      reasoningEffort: undefined,
      toolChoice: "required",
      choice: { thinking: true },
    });
    expect(any.warnings).toHaveLength(2);
    // Web search is offered to Cursor as a server tool, with its limits (#27); no warning for it.
    expect(any.request.serverTools).toEqual({ webSearch: { maxUses: 2, blockedDomains: ["x.test"] } });
    expect(any.warnings.join(" ")).not.toContain("web_search");
    expect(translate({ ...base, tool_choice: { type: "tool", name: "Bash" } }).request.options.toolChoice).toEqual({
      name: "Bash",
    });
    expect(translate({ ...base, tool_choice: { type: "none" } }).request.options.toolChoice).toBe("none");
    const budget = translate({ ...base, max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 } }).request
      .options;
    expect(budget).toMatchObject({ reasoning: true, reasoningEffort: "low" });
    const effort = translate({ ...base, thinking: { type: "adaptive" }, output_config: { effort: "max" } });
    expect(effort.request.options.reasoningEffort).toBe("high");
    const off = translate({ ...base, thinking: { type: "disabled" }, output_config: { effort: "low" } });
    expect(off.request.options).toMatchObject({ reasoning: false, reasoningEffort: undefined });
  });

  it("accepts re-sent server tool blocks and leaves them out of the conversation (#27)", () => {
    const answer = "See https://a.test/1.";
    const withBlocks = translate({
      messages: [
        { role: "user", content: "search" },
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_1",
              content: [{ type: "web_search_result", url: "https://a.test/1", title: "A", encrypted_content: "x" }],
            },
            {
              type: "text",
              text: answer,
              citations: [{ type: "web_search_result_location", url: "https://a.test/1", cited_text: "a" }],
            },
            { type: "server_tool_use", id: "srvtoolu_2", name: "web_fetch", input: { url: "https://a.test/2" } },
            { type: "web_fetch_tool_result", tool_use_id: "srvtoolu_2", content: { type: "web_fetch_result" } },
          ],
        },
        { role: "user", content: "thanks" },
      ],
    });
    const plain = translate({
      messages: [
        { role: "user", content: "search" },
        { role: "assistant", content: answer },
        { role: "user", content: "thanks" },
      ],
    });
    expect(withBlocks.request.messages).toEqual(plain.request.messages);
  });

  it("estimates tokens over the same text it sends, plus a flat cost per image", async () => {
    const { request } = translate({
      system: "sys",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "one two" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1PX } },
          ],
        },
      ],
    });
    const words = (text: string) => text.split(/\s+/).length;
    const counter = {
      countSync: words,
      count: async (texts: readonly string[]) => texts.reduce((sum, text) => sum + words(text), 0),
    };
    // "sys" (1) + "one two" (2) + one image + 2 framed messages (instructions, user) × 3.
    expect(await countInputTokens(request, Promise.resolve(counter))).toBe(1 + 2 + IMAGE_TOKENS + 6);
  });

  it("asks for one tool call per message on tool_choice.disable_parallel_tool_use, and only then", () => {
    const messages = [{ role: "user", content: "x" }];
    const tools = [{ name: "a", input_schema: { type: "object" } }];
    const one = translate({ messages, tools, tool_choice: { type: "auto", disable_parallel_tool_use: true } });
    expect(one.request.oneToolCallPerAnswer).toBe(true);
    const many = translate({ messages, tools, tool_choice: { type: "auto", disable_parallel_tool_use: false } });
    expect(many.request.oneToolCallPerAnswer).toBeUndefined();
    expect(translate({ messages, tools }).request.oneToolCallPerAnswer).toBeUndefined();
  });
});
