import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { parseCountTokensRequest, parseMessagesRequest } from "./parse.js";
import { CHECKED_IGNORED_KEYS } from "./request.js";

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
    expect(ignoredParams).toEqual(["metadata", "context_management", "temperature"]);
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

describe("parameters Cursor has no equivalent of: accepted, ignored, held to Anthropic's types", () => {
  const big = { ...valid, max_tokens: 32_000 };

  it("accepts the valid values (null too) and reports them as ignored", () => {
    const { ignoredParams } = parseMessagesRequest({
      ...big,
      temperature: 0.7,
      top_p: 1,
      top_k: 0,
      stop_sequences: ["END"],
      metadata: { user_id: "u", extra: 1 },
      service_tier: "auto",
      container: "c1",
      context_management: { edits: [] },
      mcp_servers: [{ type: "url", url: "https://x", name: "x" }],
      inference_geo: "us",
    });
    // Every checked key is exercised here (one added to the schema without a case fails this).
    // max_tokens is enforced by the kit (kit/stop-sequences.ts), so it is not listed.
    expect(ignoredParams).toEqual([...CHECKED_IGNORED_KEYS]);
    const nulls = { temperature: null, top_p: null, top_k: null, metadata: null };
    expect(parseMessagesRequest({ ...big, ...nulls }).ignoredParams).toEqual([]);
    expect(() => parseMessagesRequest({ ...big, metadata: { user_id: null }, container: { id: "c" } })).not.toThrow();
  });

  it.each([
    [{ temperature: "hot" }, "temperature", "temperature: Input should be number, got a string"],
    [{ temperature: 1.5 }, "temperature", "temperature: Input should be less than or equal to 1"],
    [{ temperature: -0.1 }, "temperature", "temperature: Input should be greater than or equal to 0"],
    [{ top_p: 2 }, "top_p", "top_p: Input should be less than or equal to 1"],
    [{ top_p: "x" }, "top_p", "top_p: Input should be number, got a string"],
    [{ top_k: 1.5 }, "top_k", "top_k: Input should be int, got a number"],
    [{ top_k: -1 }, "top_k", "top_k: Input should be greater than or equal to 0"],
    [{ stop_sequences: "END" }, "stop_sequences", "stop_sequences: Input should be array, got a string"],
    [{ stop_sequences: ["a", 1] }, "stop_sequences.1", "stop_sequences.1: Input should be string, got an integer"],
    [{ metadata: "x" }, "metadata", "metadata: Input should be object, got a string"],
    [{ metadata: { user_id: 5 } }, "metadata.user_id", "metadata.user_id: Input should be string, got an integer"],
    [{ service_tier: 1 }, "service_tier", "service_tier: Input should be string, got an integer"],
    [{ container: 1 }, "container", "container: Input should be string or object, got an integer"],
    [{ context_management: [] }, "context_management", "context_management: Input should be object, got an array"],
    [{ mcp_servers: {} }, "mcp_servers", "mcp_servers: Input should be array, got an object"],
    [{ inference_geo: true }, "inference_geo", "inference_geo: Input should be string, got a boolean"],
  ])("refuses %j naming %s", (extra, param, message) => {
    const error = rejection({ ...big, ...extra });
    expect([error.status, error.code, error.param, error.message]).toEqual([400, "invalid_request", param, message]);
  });

  it("thinking.budget_tokens: at least 1024 and less than max_tokens, unless interleaved thinking", () => {
    const enabled = (budget: number, maxTokens = 32_000) => ({
      ...valid,
      max_tokens: maxTokens,
      thinking: { type: "enabled", budget_tokens: budget },
    });
    expect(parseMessagesRequest(enabled(1024)).request.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expect(() => parseMessagesRequest(enabled(31_999))).not.toThrow();
    const low = rejection(enabled(1023));
    expect([low.status, low.param, low.message]).toEqual([
      400,
      "thinking.budget_tokens",
      "thinking.budget_tokens: Input should be greater than or equal to 1024",
    ]);
    expect(parseCountTokensRequest.bind(null, enabled(512))).toThrow(/greater than or equal to 1024/);
    const high = rejection(enabled(4096, 4096));
    expect([high.status, high.param]).toEqual([400, "thinking.budget_tokens"]);
    expect(high.message).toBe("thinking.budget_tokens: Input should be less than max_tokens (4096), got 4096");
    // With the interleaved-thinking beta the budget spans the turn's thinking blocks and may exceed max_tokens.
    const beta = "claude-code-20250219,interleaved-thinking-2025-05-14";
    expect(() => parseMessagesRequest(enabled(8192, 4096), { beta })).not.toThrow();
    expect(() => parseMessagesRequest(enabled(8192, 4096), { beta: "other-2025-01-01" })).toThrow(/less than/);
    // count_tokens has no max_tokens: only the floor applies.
    expect(() => parseCountTokensRequest({ ...enabled(64_000), max_tokens: undefined })).not.toThrow();
  });
});
