/**
 * Responses golden SSE: test/fixtures/responses/<name>.events.jsonl (one BackendEvent per line, `$throw` lines throw)
 * is translated by responseTranslation + streamTurn (the server's own body) into the exact client bytes and
 * compared with test/fixtures/responses/<name>.sse. UPDATE_GOLDEN=1 regenerates.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { streamTurn } from "../../src/surfaces/kit/translate.js";
import {
  RESPONSES_WIRE,
  type ResponseEventsOptions,
  responseTranslation,
} from "../../src/surfaces/responses/events.js";
import { createBaseResponse } from "../../src/surfaces/responses/object.js";
import { parseResponsesRequest } from "../../src/surfaces/responses/parse.js";
import { toClientTools } from "../../src/surfaces/responses/tools.js";
import type { ResponseObject } from "../../src/surfaces/responses/wire.js";
import { FIXTURES_DIR, finalArguments, replay } from "./scenarios.js";

const update = process.env.UPDATE_GOLDEN === "1";

const REQUEST = {
  model: "cursor-test",
  input: "hi",
  reasoning: { effort: "medium", summary: "auto" },
  include: ["reasoning.encrypted_content"],
  tools: [
    { type: "function", name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" } } } },
    { type: "namespace", name: "mcp__files__", tools: [{ type: "function", name: "read" }] },
    { type: "custom", name: "apply_patch", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } },
  ],
};

function options(finished: ResponseObject[]): ResponseEventsOptions {
  const parsed = parseResponsesRequest(REQUEST);
  let counter = 0;
  return {
    base: createBaseResponse(parsed.request, { id: "resp_golden", createdAt: 1_767_225_600 }),
    toolMap: toClientTools(parsed.tools, []).map,
    newItemId: (prefix) => `${prefix}_golden${++counter}`,
    reasoningSummary: true,
    includeEncryptedReasoning: true,
    onFinish: (response) => {
      finished.push(response);
    },
  };
}

async function run(name: string): Promise<{ sse: string; released: boolean; finished: ResponseObject[] }> {
  const { events, released } = replay(`responses/${name}`);
  const finished: ResponseObject[] = [];
  const body = streamTurn(events, responseTranslation(options(finished)), RESPONSES_WIRE);
  const sse = await new Response(body).text();
  return { sse, released: released(), finished };
}

function frames(sse: string): { event: string; data: { type: string; sequence_number: number } }[] {
  return sse
    .split("\n\n")
    .filter(Boolean)
    .map((frame) => {
      const [eventLine, dataLine] = frame.split("\n");
      return {
        event: eventLine?.slice("event: ".length) ?? "",
        data: JSON.parse(dataLine?.slice("data: ".length) ?? ""),
      };
    });
}

describe("Responses golden SSE (test/fixtures/responses/*.events.jsonl → *.sse)", () => {
  it.each([
    "text-turn",
    "function-call-turn",
    "custom-tool-turn",
    "length-turn",
    "error-mid-stream",
    "web-search-turn",
    "function-call-streamed-2k",
  ])("%s", async (name) => {
    const { sse, released } = await run(name);
    const file = `${FIXTURES_DIR}responses/${name}.sse`;
    if (update || !existsSync(file)) {
      if (!update) throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1`);
      writeFileSync(file, sse);
    }
    expect(sse).toBe(readFileSync(file, "utf8"));
    expect(released).toBe(true);
    // Every frame is named after its type and numbered 0, 1, 2… without gaps.
    const parsed = frames(sse);
    parsed.forEach((frame, index) => {
      expect(frame.event).toBe(frame.data.type);
      expect(frame.data.sequence_number).toBe(index);
    });
  });

  it("streams a 2 KB argument object in at least 20 deltas that add up to the final arguments and its .done", async () => {
    const parsed = frames((await run("function-call-streamed-2k")).sse).map(
      (frame) => frame.data as unknown as { type: string; delta?: string; arguments?: string },
    );
    const pieces = parsed.filter((event) => event.type === "response.function_call_arguments.delta");
    const done = parsed.find((event) => event.type === "response.function_call_arguments.done");
    const final = finalArguments("responses/function-call-streamed-2k");
    expect(pieces.length).toBeGreaterThanOrEqual(20);
    expect(pieces.map((event) => event.delta).join("")).toBe(final);
    expect(done?.arguments).toBe(final);
  });

  it("a text turn completes with usage, a reasoning summary and the bridge's encrypted_content", async () => {
    const { sse, finished } = await run("text-turn");
    const last = frames(sse).at(-1)?.data as unknown as { type: string; response: ResponseObject };
    expect(last.type).toBe("response.completed");
    expect(last.response.usage).toEqual({
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 17,
    });
    expect(last.response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
    const reasoning = last.response.output[0];
    expect(reasoning?.type === "reasoning" && reasoning.summary[0]?.text).toBe(
      "The user greets me. I should greet back.",
    );
    expect(reasoning?.type === "reasoning" && reasoning.encrypted_content).toMatch(/^cbr1\./);
    expect(finished).toEqual([last.response]);
  });

  it("tool calls map back: namespaced functions carry their namespace, custom tools their raw input", async () => {
    const fn = frames((await run("function-call-turn")).sse).at(-1)?.data as unknown as { response: ResponseObject };
    expect(fn.response.output.slice(1)).toEqual([
      expect.objectContaining({ type: "function_call", name: "exec_command", call_id: "call_exec_1" }),
      expect.objectContaining({
        type: "function_call",
        name: "read",
        namespace: "mcp__files__",
        arguments: '{"path":"a.txt"}',
      }),
    ]);
    const custom = frames((await run("custom-tool-turn")).sse).at(-1)?.data as unknown as { response: ResponseObject };
    expect(custom.response.output).toEqual([
      expect.objectContaining({
        type: "custom_tool_call",
        name: "apply_patch",
        input: "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch",
        status: "completed",
      }),
    ]);
  });

  it("a web search turn: a web_search_call item and a url_citation on the text naming a result (#27)", async () => {
    const { sse } = await run("web-search-turn");
    const types = frames(sse).map((frame) => frame.data.type);
    expect(types.slice(2, 7)).toEqual([
      "response.output_item.added",
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.web_search_call.completed",
      "response.output_item.done",
    ]);
    expect(types).toContain("response.output_text.annotation.added");
    const last = frames(sse).at(-1)?.data as unknown as { response: ResponseObject };
    expect(last.response.output[0]).toEqual({
      type: "web_search_call",
      id: "ws_golden1",
      status: "completed",
      action: { type: "search", query: "node 22 release date" },
    });
    const message = last.response.output[1];
    const part = message?.type === "message" ? message.content[0] : undefined;
    expect(part?.annotations).toEqual([
      {
        type: "url_citation",
        start_index: 32,
        end_index: 62,
        url: "https://nodejs.example/blog/22",
        title: "Node.js 22 released",
      },
    ]);
    expect(part?.text.slice(32, 62)).toBe("https://nodejs.example/blog/22");
  });

  it("a cut turn is incomplete; a failure midway is an error event then response.failed, nothing stored", async () => {
    const length = frames((await run("length-turn")).sse).at(-1)?.data as unknown as {
      type: string;
      response: ResponseObject;
    };
    expect(length.type).toBe("response.incomplete");
    expect(length.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    const failed = await run("error-mid-stream");
    const tail = frames(failed.sse)
      .slice(-2)
      .map((frame) => frame.data as unknown as Record<string, unknown>);
    expect(tail[0]).toMatchObject({
      type: "error",
      code: "upstream_unavailable",
      message: "The Cursor stream closed unexpectedly.",
    });
    expect(tail[1]).toMatchObject({
      type: "response.failed",
      response: { status: "failed", error: { code: "upstream_unavailable" } },
    });
    expect(failed.sse).not.toContain("never sent");
    expect(failed.finished).toEqual([]);
  });
});
