import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { encodeSseData } from "../kit/sse.js";
import { driveTurn } from "../kit/translate.js";
import { CHAT_WIRE, type ChatFrame, type ChatTranslationOptions, chatTranslation } from "./events.js";
import type { ChatCompletionChunk } from "./wire.js";

const options: ChatTranslationOptions = {
  id: "chatcmpl-1",
  created: 1,
  model: "m",
  reasoning: "reasoning_content",
  includeUsage: false,
};

async function* from(events: BackendEvent[]): AsyncIterable<BackendEvent> {
  yield* events;
}

async function collect(
  events: AsyncIterable<BackendEvent>,
  overrides: Partial<ChatTranslationOptions>,
  out: ChatCompletionChunk[],
): Promise<void> {
  const sink = async (frame: ChatFrame) => {
    if ("choices" in frame) out.push(frame);
  };
  await driveTurn(events, chatTranslation({ ...options, ...overrides }), sink);
}

async function chunks(
  events: BackendEvent[],
  overrides: Partial<ChatTranslationOptions> = {},
): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  await collect(from(events), overrides, out);
  return out;
}

const deltas = (list: ChatCompletionChunk[]) => list.map((chunk) => chunk.choices[0]?.delta);
const call = (id: string, name: string, args: string): BackendEvent => ({
  type: "tool-call",
  toolCallId: id,
  toolName: name,
  arguments: args,
});

describe("toChatCompletionChunks", () => {
  it("starts with the assistant role, streams text and ends with finish_reason stop", async () => {
    const out = await chunks([
      { type: "text-delta", text: "Hel" },
      { type: "text-delta", text: "" },
      { type: "text-delta", text: "lo" },
      { type: "turn-end", reason: "stop" },
    ]);
    expect(deltas(out)).toEqual([{ role: "assistant", content: "" }, { content: "Hel" }, { content: "lo" }, {}]);
    expect(out.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, null, null, "stop"]);
    expect(out.every((chunk) => chunk.id === "chatcmpl-1" && chunk.object === "chat.completion.chunk")).toBe(true);
  });

  it("numbers tool calls 0, 1, 2 per response with id, type and name on the first delta only", async () => {
    const partial = (argumentsText: string): BackendEvent => ({
      type: "tool-call-delta",
      toolCallId: "a",
      toolName: "read",
      argumentsText,
    });
    const out = await chunks([
      partial('{"p"'),
      partial('{"p":"x"'),
      call("a", "read", '{"p":"x"}'),
      { type: "text-delta", text: "between" },
      call("b", "ls", "{}"),
      call("c", "grep", ""),
      { type: "turn-end", reason: "tool-calls" },
    ]);
    const toolDeltas = deltas(out).flatMap((delta) => delta?.tool_calls ?? []);
    expect(toolDeltas).toEqual([
      { index: 0, id: "a", type: "function", function: { name: "read", arguments: '{"p"' } },
      { index: 0, function: { arguments: ':"x"' } },
      { index: 0, function: { arguments: "}" } },
      { index: 1, id: "b", type: "function", function: { name: "ls", arguments: "{}" } },
      { index: 2, id: "c", type: "function", function: { name: "grep", arguments: "{}" } },
    ]);
    expect(out.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("reports tool_calls as the finish reason when tool calls were made, even if the backend said stop", async () => {
    const out = await chunks([call("a", "t", "{}"), { type: "turn-end", reason: "stop" }]);
    expect(out.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
    const length = await chunks([
      { type: "text-delta", text: "x" },
      { type: "turn-end", reason: "length" },
    ]);
    expect(length.at(-1)?.choices[0]?.finish_reason).toBe("length");
  });

  it("routes reasoning to reasoning_content, think tags or nowhere", async () => {
    const events: BackendEvent[] = [
      { type: "reasoning-delta", text: "hm" },
      { type: "reasoning-delta", text: "m" },
      { type: "reasoning-end", durationMs: 5 },
      { type: "text-delta", text: "ok" },
      { type: "turn-end", reason: "stop" },
    ];
    expect(deltas(await chunks(events)).slice(1, -1)).toEqual([
      { reasoning_content: "hm" },
      { reasoning_content: "m" },
      { content: "ok" },
    ]);
    expect(deltas(await chunks(events, { reasoning: "think-tags" })).slice(1, -1)).toEqual([
      { content: "<think>hm" },
      { content: "m" },
      { content: "</think>\n\n" },
      { content: "ok" },
    ]);
    expect(deltas(await chunks(events, { reasoning: "none" })).slice(1, -1)).toEqual([{ content: "ok" }]);
  });

  it("closes an open think tag before text even without reasoning-end", async () => {
    const out = await chunks(
      [
        { type: "reasoning-delta", text: "r" },
        { type: "text-delta", text: "t" },
        { type: "turn-end", reason: "stop" },
      ],
      { reasoning: "think-tags" },
    );
    expect(
      deltas(out)
        .map((delta) => delta?.content)
        .join(""),
    ).toBe("<think>r</think>\n\nt");
  });

  it("emits a usage chunk after the finish chunk, counting a usage event that arrives after turn-end", async () => {
    const out = await chunks(
      [
        { type: "text-delta", text: "x" },
        { type: "turn-end", reason: "stop" },
        { type: "text-delta", text: "late" },
        { type: "usage", usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
      ],
      { includeUsage: true },
    );
    expect(out.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    });
    expect(deltas(out.slice(0, -1))).toEqual([{ role: "assistant", content: "" }, { content: "x" }, {}]);
  });

  it("fails with backend_protocol when the source ends without turn-end", async () => {
    await expect(chunks([{ type: "text-delta", text: "x" }])).rejects.toMatchObject({ code: "backend_protocol" });
  });

  it("propagates the source's error after the chunks produced so far", async () => {
    const failure = new ProxyError("backend_unavailable", "gone");
    async function* failing(): AsyncIterable<BackendEvent> {
      yield { type: "text-delta", text: "x" };
      throw failure;
    }
    const seen: ChatCompletionChunk[] = [];
    await expect(collect(failing(), {}, seen)).rejects.toBe(failure);
    expect(deltas(seen)).toEqual([{ role: "assistant", content: "" }, { content: "x" }]);
  });
});

describe("CHAT_WIRE", () => {
  it("encodes every frame, content deltas from their template included, exactly as JSON.stringify of a copy", async () => {
    const texts = ["plain", "", 'quote " backslash \\ newline \n tab \t', "\u0000\u001f\u2028 é 😀", "</script>"];
    const variants: Partial<ChatTranslationOptions>[] = [
      {},
      { systemFingerprint: "fp_1" },
      { model: 'odd "model"\n', reasoning: "think-tags" },
    ];
    for (const overrides of variants) {
      const frames: ChatFrame[] = [];
      const events: BackendEvent[] = [
        { type: "reasoning-delta", text: "why" },
        ...texts.map((text): BackendEvent => ({ type: "text-delta", text })),
        { type: "turn-end", reason: "stop" },
      ];
      await driveTurn(from(events), chatTranslation({ ...options, ...overrides }), async (frame) => {
        frames.push(frame);
      });
      expect(frames.length).toBeGreaterThan(texts.length);
      for (const frame of frames) {
        expect(CHAT_WIRE.encode(frame)).toBe(encodeSseData(JSON.parse(JSON.stringify(frame))));
        expect(CHAT_WIRE.encode(frame)).toBe(encodeSseData({ ...frame }));
      }
    }
  });
});
