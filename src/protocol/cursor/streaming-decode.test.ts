import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { decodeServerMessage } from "./run-stream.js";
import { decodeStreamingMessage } from "./streaming-decode.js";

type Init = MessageInitShape<typeof AgentServerMessageSchema>;
const encode = (init: Init) => toBinary(AgentServerMessageSchema, create(AgentServerMessageSchema, init));
const update = (message: object): Init => ({ message: { case: "interactionUpdate", value: { message } } }) as Init;

const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(" ", ""), "hex"));

describe("decodeStreamingMessage", () => {
  const fast: Array<[string, Uint8Array]> = [
    ["ascii text", encode(update({ case: "textDelta", value: { text: "hello" } }))],
    ["multi-byte text", encode(update({ case: "textDelta", value: { text: "héllo 🙂 世界" } }))],
    ["empty text", encode(update({ case: "textDelta", value: { text: "" } }))],
    ["server notice", encode(update({ case: "textDelta", value: { text: "note", isServerNotice: true } }))],
    ["long text (2-byte length)", encode(update({ case: "textDelta", value: { text: "x".repeat(300) } }))],
    ["token delta", encode(update({ case: "tokenDelta", value: { tokens: 3 } }))],
    ["zero token delta", encode(update({ case: "tokenDelta", value: { tokens: 0 } }))],
    ["large token delta", encode(update({ case: "tokenDelta", value: { tokens: 200_000 } }))],
    ["heartbeat", encode(update({ case: "heartbeat", value: {} }))],
    ["non-minimal length varint", hex("0a 07 0a 84 00 0a 02 68 69")],
  ];

  it.each(fast)("decodes %s exactly as fromBinary does", (_name, bytes) => {
    const expected = fromBinary(AgentServerMessageSchema, bytes);
    const decoded = decodeStreamingMessage(bytes);
    expect(decoded).toBeDefined();
    expect(decoded).toStrictEqual(expected);
    expect(decodeServerMessage(bytes, "Run")).toStrictEqual(expected);
  });

  const other: Array<[string, Uint8Array]> = [
    ["another update case", encode(update({ case: "turnEnded", value: { inputTokens: 5n } }))],
    ["thinking delta", encode(update({ case: "thinkingDelta", value: { text: "hm" } }))],
    ["exec message", encode({ message: { case: "execServerMessage", value: { id: 3 } } })],
    [
      "message_started_at_ms beside the delta",
      encode({
        message: {
          case: "interactionUpdate",
          value: { message: { case: "textDelta", value: { text: "hi" } }, messageStartedAtMs: 7n },
        },
      }),
    ],
    ["negative token delta", encode(update({ case: "tokenDelta", value: { tokens: -1 } }))],
    ["notice before text", hex("0a 08 0a 06 10 01 0a 02 68 69")],
    ["text twice", hex("0a 0a 0a 08 0a 02 68 69 0a 02 68 6f")],
    ["bool encoded as 2", hex("0a 08 0a 06 0a 02 68 69 10 02")],
    ["unknown field in the delta", hex("0a 08 0a 06 0a 02 68 69 18 01")],
    ["heartbeat with an unknown field", hex("0a 04 6a 02 08 01")],
    ["a token count in five bytes (over the four read here)", hex("0a 08 42 06 08 80 80 80 80 00")],
    ["empty message", new Uint8Array(0)],
  ];

  it.each(other)("leaves %s to fromBinary", (_name, bytes) => {
    expect(decodeStreamingMessage(bytes)).toBeUndefined();
    expect(decodeServerMessage(bytes, "Run")).toStrictEqual(fromBinary(AgentServerMessageSchema, bytes));
  });

  it("leaves invalid UTF-8 and truncated frames to fromBinary, which rejects them", () => {
    for (const bytes of [hex("0a 05 0a 03 0a 01 ff"), hex("0a 07 0a 05 0a 03 68")]) {
      expect(decodeStreamingMessage(bytes)).toBeUndefined();
      expect(() => fromBinary(AgentServerMessageSchema, bytes)).toThrow();
      expect(() => decodeServerMessage(bytes, "Run")).toThrow(/not a valid agent.v1.AgentServerMessage/);
    }
  });
});
