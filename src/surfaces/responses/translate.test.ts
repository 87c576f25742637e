import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { parseResponsesRequest } from "./parse.js";
import { encodeReasoningToken } from "./reasoning-token.js";
import { toEngineRequest } from "./translate.js";

function translate(body: Record<string, unknown>) {
  const parsed = parseResponsesRequest({ model: "m", ...body });
  return { ...toEngineRequest(parsed.request, parsed.items, parsed.tools), ignoredParams: parsed.ignoredParams };
}

function rejection(body: unknown): ProxyError {
  try {
    const parsed = parseResponsesRequest(body);
    toEngineRequest(parsed.request, parsed.items, parsed.tools);
  } catch (error) {
    if (error instanceof ProxyError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

describe("Responses request → EngineRequest", () => {
  it("a string input is one user message; instructions stay out of the history", () => {
    const { request } = translate({ input: "hello", instructions: "Be brief." });
    expect(request.instructions).toEqual(["Be brief."]);
    expect(request.messages).toEqual([{ role: "user", parts: [{ type: "text", text: "hello" }] }]);
    expect(request.options).toEqual({ reasoning: true, reasoningEffort: undefined, toolChoice: "auto" });
  });

  it("folds a Codex history: developer → system, reasoning + message + calls → one assistant, outputs → tool", () => {
    const ours = encodeReasoningToken("I will list files.");
    const { request, warnings } = translate({
      input: [
        { type: "message", id: "m1", role: "developer", content: [{ type: "input_text", text: "sandbox rules" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "sum" }], encrypted_content: ours },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Listing." }] },
        { type: "function_call", id: "fc_1", call_id: "c1", name: "exec_command", arguments: '{"cmd":"ls"}' },
        { type: "function_call", call_id: "c2", name: "read", namespace: "mcp__fs__", arguments: "{}" },
        { type: "custom_tool_call", call_id: "c3", name: "apply_patch", input: "*** Begin Patch" },
        { type: "function_call_output", call_id: "c1", output: "a.txt" },
        {
          type: "function_call_output",
          call_id: "c2",
          output: [
            { type: "input_text", text: "x" },
            { type: "input_image", image_url: "data:" },
          ],
        },
        { type: "custom_tool_call_output", call_id: "c3", output: "Done!" },
        { type: "reasoning", summary: [{ type: "summary_text", text: "foreign" }], encrypted_content: "gAAAAB-openai" },
        { type: "web_search_call", id: "ws_1", action: { type: "search", query: "q" } },
      ],
    });
    expect(request.messages).toEqual([
      { role: "system", text: "sandbox rules" },
      { role: "user", parts: [{ type: "text", text: "list files" }] },
      {
        role: "assistant",
        text: "Listing.",
        reasoning: [{ text: "I will list files.", opaque: ours }],
        toolCalls: [
          { id: "c1", name: "exec_command", arguments: '{"cmd":"ls"}' },
          { id: "c2", name: "mcp__fs__read", arguments: "{}" },
          { id: "c3", name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' },
        ],
      },
      { role: "tool", toolCallId: "c1", content: "a.txt", isError: false, param: "input[7].call_id" },
      { role: "tool", toolCallId: "c2", content: "x", isError: false, param: "input[8].call_id" },
      { role: "tool", toolCallId: "c3", content: "Done!", isError: false, param: "input[9].call_id" },
      { role: "assistant", text: "", reasoning: [{ text: "foreign" }], toolCalls: [] },
    ]);
    // A web_search_call coming back is left out of the history without a warning (Cursor's state holds it, #27).
    expect(warnings).toEqual(["tool output parts of type 'input_image' were dropped (text only)"]);
  });

  it("maps function, namespace and custom tools; built-in tools are dropped with a warning, never an error", () => {
    const { request, toolMap, warnings } = translate({
      input: "x",
      tools: [
        { type: "function", name: "exec_command", description: "Run", parameters: { type: "object" }, strict: false },
        { type: "namespace", name: "mcp__fs__", description: "Files", tools: [{ type: "function", name: "read" }] },
        {
          type: "custom",
          name: "apply_patch",
          description: "Patch",
          format: { type: "grammar", syntax: "lark", definition: "start: x" },
        },
        { type: "web_search", filters: { allowed_domains: ["docs.test"] } },
        { type: "tool_search" },
      ],
      tool_choice: { type: "function", name: "exec_command" },
    });
    expect(request.tools.map((tool) => tool.name)).toEqual(["exec_command", "mcp__fs__read", "apply_patch"]);
    expect(request.tools[1]?.description).toBe("Files");
    expect(request.tools[2]?.description).toContain("lark grammar:\nstart: x");
    expect(request.tools[2]?.inputSchema).toMatchObject({
      required: ["input"],
      properties: { input: { type: "string" } },
    });
    expect(toolMap.get("mcp__fs__read")).toEqual({ kind: "function", name: "read", namespace: "mcp__fs__" });
    expect(toolMap.get("apply_patch")).toEqual({ kind: "custom", name: "apply_patch" });
    expect(request.options.toolChoice).toEqual({ name: "exec_command" });
    expect(warnings).toEqual(["built-in tools the bridge cannot run were dropped: tool_search"]);
    // web_search is offered to Cursor, which runs it (#27).
    expect(request.serverTools).toEqual({
      webSearch: { allowedDomains: ["docs.test"] },
      webFetch: { allowedDomains: ["docs.test"] },
    });
  });

  it("decodes data-URL images into raw bytes", () => {
    const url = `data:image/png;base64,${PNG.toString("base64")}`;
    const { request } = translate({
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "what is this" },
            { type: "input_image", image_url: url },
          ],
        },
      ],
    });
    expect(request.messages[0]).toEqual({
      role: "user",
      parts: [
        { type: "text", text: "what is this" },
        { type: "image", mimeType: "image/png", data: new Uint8Array(PNG) },
      ],
    });
  });

  it("maps reasoning effort and reports what it cannot honour", () => {
    const { request, warnings, ignoredParams } = translate({
      input: "x",
      reasoning: { effort: "xhigh", summary: "auto" },
      max_output_tokens: 100,
      text: { format: { type: "json_schema", name: "answer", schema: { type: "object" } }, verbosity: "low" },
      temperature: 0.2,
      prompt_cache_key: "k",
    });
    expect(request.options.reasoningEffort).toBe("high");
    // max_output_tokens is enforced by the kit (kit/stop-sequences.ts): neither a warning nor an ignored param.
    expect(warnings).toEqual([
      "text.format json_schema is approximated with an instruction; the output is not validated against the schema.",
    ]);
    expect(request.instructions).toEqual([expect.stringContaining('JSON value named "answer"')]);
    expect(ignoredParams).toEqual(["text", "temperature", "prompt_cache_key"]);
    expect(translate({ input: "x", reasoning: { effort: "none" } }).request.options.reasoning).toBe(false);
  });

  it.each([
    [{ input: "x" }, "model", "Missing required parameter: 'model'."],
    [{ model: "m" }, "input", "Missing required parameter: 'input'."],
    [{ model: "m", input: [{ role: "robot", content: "x" }] }, "input[0].role", undefined],
    [{ model: "m", input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id", undefined],
    [
      { model: "m", input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] },
      "input[0].content[0].type",
      undefined,
    ],
    [
      { model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: "https://x/y.png" }] }] },
      "input[0].content[0].image_url",
      undefined,
    ],
    [
      {
        model: "m",
        input: [{ role: "user", content: [{ type: "input_image", image_url: "data:text/plain;base64,aGk=" }] }],
      },
      "input[0].content[0].image_url",
      undefined,
    ],
    [{ model: "m", input: [{ id: "x" }] }, "input[0].type", undefined],
    [{ model: "m", input: "x", tools: [{ type: "function" }] }, "tools[0].name", undefined],
    [{ model: "m", input: "x", background: true }, "background", undefined],
    [{ model: "m", input: [] }, "input", undefined],
  ])("rejects %j at %s", (body, param, message) => {
    const error = rejection(body);
    expect(error).toMatchObject({ code: "invalid_request", status: 400, param });
    expect(error.message).toContain(`'${param}'`);
    if (message !== undefined) expect(error.message).toBe(message);
  });
});

describe("parallel_tool_calls", () => {
  it("asks for one function call per response on false, and no longer lists it as ignored", () => {
    const one = translate({ input: "x", parallel_tool_calls: false });
    expect(one.request.oneToolCallPerAnswer).toBe(true);
    expect(one.ignoredParams).not.toContain("parallel_tool_calls");
    expect(translate({ input: "x", parallel_tool_calls: true }).request.oneToolCallPerAnswer).toBeUndefined();
    expect(translate({ input: "x" }).request.oneToolCallPerAnswer).toBeUndefined();
  });
});

describe("tools and tool_choice", () => {
  const fn = (name: string, namespace?: string) => ({
    type: "function",
    name,
    parameters: { type: "object" },
    ...(namespace === undefined ? {} : { namespace }),
  });

  it("refuses two function tools of one name (in one namespace), naming the second", () => {
    const error = rejection({ model: "m", input: "hi", tools: [fn("read"), fn("write"), fn("read")] });
    expect(error.param).toBe("tools[2].name");
    expect(error.message).toContain("duplicate tool name 'read'");
    expect(() => translate({ input: "hi", tools: [fn("read", "a"), fn("read", "b")] })).not.toThrow();
  });

  it("refuses a tool_choice that needs tools or names one not declared", () => {
    expect(rejection({ model: "m", input: "hi", tool_choice: "required" }).param).toBe("tool_choice");
    const unknown = rejection({
      model: "m",
      input: "hi",
      tools: [fn("read")],
      tool_choice: { type: "function", name: "zz" },
    });
    expect(unknown.param).toBe("tool_choice.name");
    expect(() =>
      translate({ input: "hi", tools: [fn("read")], tool_choice: { type: "function", name: "read" } }),
    ).not.toThrow();
    const namespaced = { type: "namespace", name: "mcp", tools: [fn("lookup")] };
    expect(() =>
      translate({ input: "hi", tools: [namespaced], tool_choice: { type: "function", name: "lookup" } }),
    ).not.toThrow();
    expect(() => translate({ input: "hi", tool_choice: "auto" })).not.toThrow();
  });
});
