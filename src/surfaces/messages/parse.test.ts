import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { parseCountTokensRequest, parseMessagesRequest } from "./parse.js";

const valid = { model: "claude-sonnet-5-5", max_tokens: 1024, messages: [{ role: "user", content: "hi" }] };

function rejection(body: unknown): ProxyError {
  try {
    parseMessagesRequest(body);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("parseMessagesRequest", () => {
  it("accepts Claude Code's body shape and reports the keys it cannot act on", () => {
    const { request, ignoredParams } = parseMessagesRequest({
      ...valid,
      system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "run it", cache_control: { type: "ephemeral" } }] },
        { role: "system", content: "<system-reminder>be brief</system-reminder>" },
      ],
      tools: [
        {
          name: "Bash",
          description: "Runs a command",
          input_schema: {
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            additionalProperties: false,
          },
          defer_loading: true,
        },
      ],
      metadata: { user_id: '{"device":"x"}' },
      thinking: { type: "adaptive" },
      context_management: { edits: [] },
      output_config: { effort: "high" },
      temperature: 1,
      stream: true,
    });
    expect(request.messages).toHaveLength(2);
    expect(ignoredParams).toEqual(["max_tokens", "metadata", "context_management", "temperature"]);
  });

  it("requires max_tokens like Anthropic", () => {
    const { max_tokens: _, ...body } = valid;
    const error = rejection(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe("max_tokens");
    expect(error.message).toBe("max_tokens: Field required");
  });

  it("validates web search tool limits and names the field (#27)", () => {
    const search = { type: "web_search_20250305", name: "web_search" };
    expect(parseMessagesRequest({ ...valid, tools: [{ ...search, max_uses: 2 }] }).request.tools).toHaveLength(1);
    const zero = rejection({ ...valid, tools: [{ ...search, max_uses: 0 }] });
    expect([zero.status, zero.param]).toEqual([400, "tools.0.max_uses"]);
    const both = rejection({
      ...valid,
      tools: [{ ...search, allowed_domains: ["a.test"], blocked_domains: ["b.test"] }],
    });
    expect(both.param).toBe("tools.0.blocked_domains");
    expect(both.message).toContain("Cannot specify both allowed_domains and blocked_domains.");
    expect(rejection({ ...valid, tools: [{ ...search, allowed_domains: "a.test" }] }).param).toBe(
      "tools.0.allowed_domains",
    );
  });

  it("names the field of an unsupported block type", () => {
    const error = rejection({
      ...valid,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "document", source: {} },
          ],
        },
      ],
    });
    expect(error.param).toBe("messages.0.content.1.type");
    expect(error.message).toContain("document blocks are not supported");
  });

  it("rejects URL image sources saying only base64 is accepted", () => {
    const error = rejection({
      ...valid,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://x/y.png" } }] }],
    });
    expect(error.param).toBe("messages.0.content.0.source.type");
    expect(error.message).toContain("only base64 image sources are accepted");
  });

  it("names an unknown role with the allowed ones", () => {
    const error = rejection({ ...valid, messages: [{ role: "tool", content: "x" }] });
    expect(error.param).toBe("messages.0.role");
    expect(error.message).toContain('"user", "assistant", "system"');
  });

  it("rejects non-object bodies and wrong types with a 400", () => {
    expect(rejection([]).message).toBe("The request body must be a JSON object.");
    expect(rejection({ ...valid, max_tokens: "many" }).message).toBe(
      "max_tokens: Input should be number, got a string",
    );
    expect(rejection({ ...valid, messages: [] }).message).toBe("messages: List should have at least 1 item(s)");
  });

  it("count_tokens does not require max_tokens", () => {
    const { max_tokens: _, ...body } = valid;
    expect(parseCountTokensRequest(body).request.model).toBe("claude-sonnet-5-5");
  });
});

describe("tools and tool_choice", () => {
  const tool = (name: string) => ({ name, input_schema: { type: "object" } });

  it("refuses two tools of one name, naming the second", () => {
    const error = rejection({ ...valid, tools: [tool("read"), tool("write"), tool("read")] });
    expect(error.param).toBe("tools.2.name");
    expect(error.message).toContain("Tool names must be unique");
    expect(parseCountTokensRequest.bind(null, { ...valid, tools: [tool("a"), tool("a")] })).toThrow(/unique/);
  });

  it("refuses a tool_choice that needs tools or names one not declared; accepts auto and none without tools", () => {
    expect(rejection({ ...valid, tool_choice: { type: "any" } }).param).toBe("tool_choice");
    const unknown = rejection({ ...valid, tools: [tool("read")], tool_choice: { type: "tool", name: "zz" } });
    expect(unknown.param).toBe("tool_choice.name");
    expect(unknown.message).toContain("`zz`");
    expect(() => parseMessagesRequest({ ...valid, tool_choice: { type: "auto" } })).not.toThrow();
    expect(() => parseMessagesRequest({ ...valid, tool_choice: { type: "none" } })).not.toThrow();
    expect(() =>
      parseMessagesRequest({ ...valid, tools: [tool("read")], tool_choice: { type: "tool", name: "read" } }),
    ).not.toThrow();
  });
});
