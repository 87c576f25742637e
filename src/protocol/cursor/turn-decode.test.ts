import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AgentServerMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { ConversationStateStructureSchema } from "../../gen/agent/v1/conversation_state_pb.js";
import type { AgentMode } from "../../gen/agent/v1/enums_pb.js";
import { decodeServerMessage } from "./run-stream.js";
import { checkpointBytes, decodeTurnMessage } from "./turn-decode.js";

type Init = MessageInitShape<typeof AgentServerMessageSchema>;
const encode = (init: Init) => toBinary(AgentServerMessageSchema, create(AgentServerMessageSchema, init));
const update = (message: object): Init => ({ message: { case: "interactionUpdate", value: { message } } }) as Init;
const state = (init: MessageInitShape<typeof ConversationStateStructureSchema>): Init => ({
  message: { case: "conversationCheckpointUpdate", value: init },
});
const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(" ", ""), "hex"));
const bytes = (n: number, seed = 1) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

/** What the backend stored before: the checkpoint decoded by fromBinary and encoded again. */
function storedBefore(frame: Uint8Array): Uint8Array {
  const m = fromBinary(AgentServerMessageSchema, frame).message;
  if (m.case !== "conversationCheckpointUpdate") throw new Error("not a checkpoint");
  return toBinary(ConversationStateStructureSchema, m.value);
}

/** What the backend stores now (run-session.ts): the bytes as received when kept, else encoded. */
function storedNow(frame: Uint8Array): Uint8Array {
  const m = decodeServerMessage(frame, "Run").message;
  if (m.case !== "conversationCheckpointUpdate") throw new Error("not a checkpoint");
  return checkpointBytes(m.value) ?? toBinary(ConversationStateStructureSchema, m.value);
}

describe("decodeTurnMessage", () => {
  const fast: Array<[string, Uint8Array]> = [
    [
      "set_blob_args",
      encode({
        message: {
          case: "kvServerMessage",
          value: { id: 7, message: { case: "setBlobArgs", value: { blobId: bytes(32), blobData: bytes(300) } } },
        },
      }),
    ],
    [
      "set_blob_args with id 0 and empty data",
      encode({
        message: { case: "kvServerMessage", value: { message: { case: "setBlobArgs", value: { blobId: bytes(32) } } } },
      }),
    ],
    [
      "empty set_blob_args",
      encode({ message: { case: "kvServerMessage", value: { id: 1, message: { case: "setBlobArgs", value: {} } } } }),
    ],
    [
      "get_blob_args",
      encode({
        message: {
          case: "kvServerMessage",
          value: { id: 300, message: { case: "getBlobArgs", value: { blobId: bytes(32) } } },
        },
      }),
    ],
    [
      "request_context_args",
      encode({
        message: {
          case: "execServerMessage",
          value: { id: 1, execId: "ex-1", message: { case: "requestContextArgs", value: {} } },
        },
      }),
    ],
    [
      "request_context_args without ids",
      encode({ message: { case: "execServerMessage", value: { message: { case: "requestContextArgs", value: {} } } } }),
    ],
    [
      "turn_ended",
      encode(
        update({
          case: "turnEnded",
          value: {
            inputTokens: 5n,
            outputTokens: 1n,
            cacheReadTokens: 0n,
            cacheWriteTokens: 5n,
            reasoningTokens: 2n ** 40n,
          },
        }),
      ),
    ],
    ["turn_ended with some counts", encode(update({ case: "turnEnded", value: { outputTokens: 3n } }))],
    ["empty turn_ended", encode(update({ case: "turnEnded", value: {} }))],
    ["turn_ended with a non-minimal count (bytes are kept only for a state)", hex("0a 05 72 03 08 81 00")],
    ["routed_model", encode(update({ case: "routedModel", value: { displayName: "Composer 1.5 ✓" } }))],
    ["empty routed_model", encode(update({ case: "routedModel", value: {} }))],
    ["new checkpoint", encode(state({ turns: [bytes(32)], tokenDetails: { usedTokens: 12, maxTokens: 200_000 } }))],
    [
      "full checkpoint",
      encode(
        state({
          rootPromptMessagesJson: [bytes(32, 2), bytes(32, 3)],
          turnsOld: [bytes(5)],
          todos: [bytes(0)],
          tokenDetails: { maxTokens: 1 },
          summary: new Uint8Array(0),
          plan: bytes(3),
          turns: [bytes(32, 4), bytes(32, 5), bytes(200, 6)],
          mode: 2,
          summaryArchive: bytes(40),
          summaryArchives: [bytes(1)],
          selfSummaryCount: 3,
        }),
      ),
    ],
    ["checkpoint with empty token details", encode(state({ tokenDetails: {} }))],
    ["checkpoint with mode 0", encode(state({ mode: 0, turns: [bytes(32)] }))],
    ["empty checkpoint", encode(state({}))],
  ];

  it.each(fast)("decodes %s exactly as fromBinary does", (_name, frame) => {
    const expected = fromBinary(AgentServerMessageSchema, frame);
    const decoded = decodeTurnMessage(frame);
    expect(decoded).toBeDefined();
    expect(decoded).toStrictEqual(expected);
    expect(decodeServerMessage(frame, "Run")).toStrictEqual(expected);
  });

  it.each(fast.filter(([name]) => name.includes("checkpoint")))(
    "keeps the bytes of %s as toBinary writes them",
    (_n, frame) => {
      const m = decodeTurnMessage(frame)?.message;
      expect(m?.case).toBe("conversationCheckpointUpdate");
      const kept = m?.case === "conversationCheckpointUpdate" ? checkpointBytes(m.value) : undefined;
      expect(kept).toBeDefined();
      expect(kept).toStrictEqual(storedBefore(frame));
    },
  );

  const other: Array<[string, Uint8Array]> = [
    [
      "kv with a span context",
      encode({
        message: {
          case: "kvServerMessage",
          value: { id: 1, message: { case: "setBlobArgs", value: {} }, spanContext: {} },
        },
      }),
    ],
    ["kv without a case", encode({ message: { case: "kvServerMessage", value: { id: 1 } } })],
    ["blob data in get_blob_args", hex("22 08 08 01 12 04 12 02 61 62")],
    ["blob id twice", hex("22 0a 08 01 1a 06 0a 01 61 0a 01 62")],
    [
      "request_context_args with a workspace",
      encode({
        message: {
          case: "execServerMessage",
          value: { id: 1, message: { case: "requestContextArgs", value: { workspaceId: "w" } } },
        },
      }),
    ],
    [
      "another exec",
      encode({ message: { case: "execServerMessage", value: { id: 3, message: { case: "lsArgs", value: {} } } } }),
    ],
    ["negative turn_ended count", encode(update({ case: "turnEnded", value: { inputTokens: -1n } }))],
    ["turn_ended counts out of order", hex("0a 06 72 04 10 01 08 01")],
    ["turn_ended with an unknown field", hex("0a 04 72 02 30 01")],
    ["a turn_ended count in eight bytes (over the seven read here)", hex("0a 0b 72 09 08 80 80 80 80 80 80 80 01")],
    [
      "turn_ended beside message_started_at_ms",
      encode({
        message: {
          case: "interactionUpdate",
          value: { message: { case: "turnEnded", value: {} }, messageStartedAtMs: 7n },
        },
      }),
    ],
    ["thinking delta", encode(update({ case: "thinkingDelta", value: { text: "hm" } }))],
    ["a query", encode({ message: { case: "interactionQuery", value: {} } })],
    ["empty message", new Uint8Array(0)],
  ];

  it.each(other)("leaves %s to fromBinary", (_name, frame) => {
    expect(decodeTurnMessage(frame)).toBeUndefined();
    expect(decodeServerMessage(frame, "Run")).toStrictEqual(fromBinary(AgentServerMessageSchema, frame));
  });

  // Checkpoints whose bytes are not toBinary's for their value: the value read (by fromBinary) is encoded again.
  const reencoded: Array<[string, Uint8Array]> = [
    ["fields out of order", hex("1a 08 42 02 61 62 2a 02 08 01")],
    ["a repeated field split", hex("1a 0a 42 01 61 2a 02 08 01 42 01 62")],
    ["token details twice", hex("1a 08 2a 02 08 01 2a 02 10 02")],
    ["an explicit zero count", hex("1a 04 2a 02 08 00")],
    ["counts out of order", hex("1a 06 2a 04 10 02 08 01")],
    ["a non-minimal length", hex("1a 05 42 82 00 61 62")],
    ["a non-minimal count", hex("1a 05 2a 03 08 81 00")],
    ["a zero summary count", hex("1a 03 88 01 00")],
    ["an unknown field", hex("1a 04 42 00 f8 03 01")],
    ["a string list", encode(state({ pendingToolCalls: ["a"] }))],
    ["a map", encode(state({ fileStates: { a: bytes(2) } }))],
    ["step timings", encode(state({ turnTimings: [{ durationMs: 1n }] }))],
    ["a negative mode", encode(state({ mode: -1 as AgentMode }))],
  ];

  it.each(reencoded)("stores a checkpoint with %s as it was stored before", (_name, frame) => {
    expect(() => fromBinary(AgentServerMessageSchema, frame)).not.toThrow();
    expect(decodeTurnMessage(frame)).toBeUndefined();
    expect(storedNow(frame)).toStrictEqual(storedBefore(frame));
  });

  it("stores every generated checkpoint as it was stored before", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const list = () => Array.from({ length: rand(3) }, () => bytes(rand(140), rand(256)));
    let kept = 0;
    for (let i = 0; i < 500; i++) {
      const frame = encode(
        state({
          rootPromptMessagesJson: list(),
          turns: list(),
          todos: list(),
          ...(rand(2) === 0
            ? {}
            : { tokenDetails: { usedTokens: rand(3) * rand(300_000), maxTokens: rand(2) * 200_000 } }),
          ...(rand(3) === 0 ? { summary: bytes(rand(20)) } : {}),
          ...(rand(4) === 0 ? { mode: rand(5) } : {}),
          ...(rand(5) === 0 ? { pendingToolCalls: ["call"] } : {}),
          selfSummaryCount: rand(3),
        }),
      );
      const m = decodeServerMessage(frame, "Run").message;
      if (m.case === "conversationCheckpointUpdate" && checkpointBytes(m.value) !== undefined) kept++;
      expect(storedNow(frame)).toStrictEqual(storedBefore(frame));
    }
    expect(kept).toBeGreaterThan(300);
  });

  it("leaves invalid and truncated frames to fromBinary, which rejects them", () => {
    for (const frame of [
      hex("0a 04 c2 01 02 0a"),
      hex("12 04 52 00 7a 05"),
      hex("22 06 08 01 1a 02 0a 05"),
      hex("1a 03 42 05 61"),
      hex("12 05 52 00 7a 01 ff"), // an exec id that is not UTF-8
      hex("0a 06 c2 01 03 0a 01 ff"), // a display name that is not UTF-8
      hex("1a 02 40 01"), // a bytes field as a varint
    ]) {
      expect(decodeTurnMessage(frame)).toBeUndefined();
      expect(() => decodeServerMessage(frame, "Run")).toThrow(/not a valid agent.v1.AgentServerMessage/);
    }
  });
});
