import { describe, expect, it } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { driveTurn, foldTurn } from "../kit/translate.js";
import { type AnthropicEventOptions, type MessagesFrame, messagesTranslation } from "./events.js";

async function* from(events: BackendEvent[]): AsyncGenerator<BackendEvent> {
  yield* events;
}

const options: AnthropicEventOptions = { id: "msg_1", model: "claude-opus-5-5", reasoning: true, sign: (t) => `s${t}` };

async function collect(
  events: BackendEvent[],
  overrides: Partial<AnthropicEventOptions> = {},
): Promise<MessagesFrame[]> {
  const out: MessagesFrame[] = [];
  await driveTurn(from(events), messagesTranslation({ ...options, ...overrides }), async (frame) => {
    out.push(frame);
  });
  return out;
}

const toAnthropicMessage = (events: AsyncIterable<BackendEvent>, opts: AnthropicEventOptions) =>
  foldTurn(events, messagesTranslation(opts));

describe("the folded message", () => {
  it("folds thinking, text and a tool call into one message", async () => {
    const message = await toAnthropicMessage(
      from([
        { type: "reasoning-delta", text: "think" },
        { type: "text-delta", text: "Hi" },
        { type: "text-delta", text: " there" },
        { type: "tool-call", toolCallId: "c1", toolName: "Bash", arguments: '{"command":"ls"}' },
        { type: "usage", usage: { inputTokens: 5, outputTokens: 7, totalTokens: 12 } },
        { type: "turn-end", reason: "tool-calls" },
      ]),
      options,
    );
    expect(message).toEqual({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [
        { type: "thinking", thinking: "think", signature: "sthink" },
        { type: "text", text: "Hi there" },
        { type: "tool_use", id: "toolu_c1", name: "Bash", input: { command: "ls" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 7 },
    });
  });

  it("maps a length stop to max_tokens and treats empty arguments as {}", async () => {
    const message = await toAnthropicMessage(
      from([
        { type: "tool-call", toolCallId: "c1", toolName: "Now", arguments: "" },
        { type: "turn-end", reason: "length" },
      ]),
      options,
    );
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.content).toEqual([{ type: "tool_use", id: "toolu_c1", name: "Now", input: {} }]);
  });
});

describe("the Messages events", () => {
  it("drops thinking when the client did not ask for it", async () => {
    const events = await collect(
      [
        { type: "reasoning-delta", text: "secret" },
        { type: "reasoning-end", durationMs: 1 },
        { type: "text-delta", text: "ok" },
        { type: "turn-end", reason: "stop" },
      ],
      { reasoning: false },
    );
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("fails (after what it could send) when the turn ends without turn-end or with bad arguments", async () => {
    await expect(collect([{ type: "text-delta", text: "cut" }])).rejects.toThrow(ProxyError);
    await expect(collect([{ type: "tool-call", toolCallId: "c", toolName: "Bash", arguments: "[1]" }])).rejects.toThrow(
      "not a JSON object",
    );
  });
});
