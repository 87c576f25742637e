import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type AgentClientMessage, AgentClientMessageSchema } from "../../gen/agent/v1/agent_pb.js";
import { ConversationStateStructureSchema } from "../../gen/agent/v1/conversation_state_pb.js";
import { encodeClientMessage } from "./run-stream.js";
import { encodeStreamingMessage } from "./streaming-encode.js";
import { checkpointBytes, readCheckpoint } from "./turn-decode.js";

type RunInit = MessageInitShape<typeof AgentClientMessageSchema>["message"] & { case: "runRequest" };
type Run = NonNullable<RunInit["value"]>;

const blob = (size: number, seed = 0) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff);

function message(value: Run): AgentClientMessage {
  return create(AgentClientMessageSchema, { message: { case: "runRequest", value } });
}

function userAction(user: Record<string, unknown>): Run["action"] {
  return { action: { case: "userMessageAction", value: { userMessage: user } } };
}

/** The layout's optional parts, each present and absent, around the length varint boundaries. */
function layouts(): Run[] {
  const out: Run[] = [];
  const texts = [
    "",
    "a",
    "é😀",
    "\udfff\ud800x",
    "b".repeat(127),
    "é".repeat(64),
    "c".repeat(16_384),
    "d".repeat(2_100_000),
  ];
  for (const [i, text] of texts.entries()) {
    out.push(
      { action: userAction({ text }) },
      {
        conversationState: { rootPromptMessagesJson: [blob(32, i), blob(0), blob(200, i)] },
        action: userAction({ text, messageId: "m-é", mode: i % 4, conversationStateBlobId: blob(i * 40) }),
        requestedModel: { modelId: text.slice(0, 50), maxMode: i % 2 === 0, parameters: [{ id: "p", value: text }] },
        conversationId: i % 2 === 0 ? "" : "c",
        conversationGroupId: text,
        runId: "",
        clientSupportsRoutedModelUpdate: i % 3 === 0,
      },
      {
        conversationState: {},
        action: userAction({ text, mode: 0x7fff_ffff }),
        requestedModel: {},
        runId: text,
      },
      {
        // A state only toBinary writes (a string list and a map): the rest is still written by hand.
        conversationState: { pendingToolCalls: ["x"], fileStates: { a: blob(3) }, selfSummaryCount: i },
        action: userAction({ messageId: text }),
        requestedModel: { parameters: [{}, { id: "é" }, { value: "v" }] },
        conversationId: text,
      },
    );
  }
  return out;
}

describe("encodeRunRequest (the Run's first message written by hand)", () => {
  it("writes toBinary's bytes for every layout", () => {
    const all = layouts();
    expect(all.length).toBe(32);
    for (const [i, value] of all.entries()) {
      const run = message(value);
      const fast = encodeStreamingMessage(run);
      expect(fast, `layout ${i}`).toBeDefined();
      const same = Buffer.from(fast ?? []).equals(Buffer.from(toBinary(AgentClientMessageSchema, run)));
      expect(same, `layout ${i}`).toBe(true);
    }
  });

  it("sends a checkpoint read from its bytes as those bytes", () => {
    const stored = toBinary(
      ConversationStateStructureSchema,
      create(ConversationStateStructureSchema, {
        turns: [blob(32, 1), blob(32, 2)],
        tokenDetails: { usedTokens: 5, maxTokens: 10 },
        mode: 2,
      }),
    );
    const state = readCheckpoint(stored);
    expect(state).toStrictEqual(fromBinary(ConversationStateStructureSchema, stored));
    if (state === undefined) throw new Error("not read");
    expect(checkpointBytes(state)).toEqual(stored);
    const run = message({ conversationState: state, action: userAction({ text: "t" }), runId: "r" });
    expect(encodeStreamingMessage(run)).toEqual(toBinary(AgentClientMessageSchema, run));
    // Bytes toBinary would not write (a varint longer than it needs, fields out of order) are left to fromBinary.
    expect(readCheckpoint(Uint8Array.from([0x50, 0x82, 0x00]))).toBeUndefined();
    expect(readCheckpoint(Uint8Array.from([0x42, 0x00, 0x0a, 0x00]))).toBeUndefined();
    expect(readCheckpoint(Uint8Array.from([0x12, 0x01]))).toBeUndefined();
  });

  it("leaves every other run request to toBinary, with the same bytes", () => {
    const base = { action: userAction({ text: "t" }), runId: "r" };
    const others: Run[] = [
      { runId: "r" },
      { ...base, action: { action: { case: "resumeAction", value: {} } } },
      { ...base, action: { action: { case: "userMessageAction", value: {} } } },
      { ...base, action: { action: { case: "userMessageAction", value: { userMessage: {}, requestContext: {} } } } },
      { ...base, action: userAction({ text: "t", selectedContext: { selectedImages: [{ uuid: "u" }] } }) },
      { ...base, action: userAction({ text: "t", isSimulatedMsg: false }) },
      { ...base, action: userAction({ text: "t", mode: -1 }) },
      { ...base, modelDetails: { modelId: "m" } },
      { ...base, customSystemPrompt: "" },
      { ...base, clientSupportsInlineImages: true },
      { ...base, agentSessionId: "s" },
      { ...base, systemPromptSpec: { spec: { case: "append", value: "x" } } },
      { ...base, requestedModel: { modelId: "m", credentials: { case: "apiKeyCredentials", value: {} } } },
    ];
    for (const [i, value] of others.entries()) {
      const run = message(value);
      expect(encodeStreamingMessage(run), `other ${i}`).toBeUndefined();
      expect(encodeClientMessage(run), `other ${i}`).toEqual(toBinary(AgentClientMessageSchema, run));
    }
    // Unknown fields anywhere (a message read back with them keeps them: toBinary writes them).
    const unknown = [{ no: 999, wireType: 0, data: new Uint8Array([1]) }];
    const places: ((run: AgentClientMessage) => void)[] = [
      (run) => {
        run.$unknown = unknown;
      },
      (run) => {
        if (run.message.case === "runRequest") run.message.value.$unknown = unknown;
      },
      (run) => {
        if (run.message.case === "runRequest" && run.message.value.conversationState !== undefined)
          run.message.value.conversationState.$unknown = unknown;
      },
      (run) => {
        if (run.message.case === "runRequest" && run.message.value.requestedModel !== undefined) {
          const parameter = run.message.value.requestedModel.parameters[0];
          if (parameter !== undefined) parameter.$unknown = unknown;
        }
      },
      (run) => {
        const action = run.message.case === "runRequest" ? run.message.value.action?.action : undefined;
        if (action?.case === "userMessageAction" && action.value.userMessage !== undefined)
          action.value.userMessage.$unknown = unknown;
      },
    ];
    for (const [i, place] of places.entries()) {
      const run = message({
        ...base,
        conversationState: { rootPromptMessagesJson: [blob(4)] },
        requestedModel: { parameters: [{ id: "p" }] },
      });
      expect(encodeStreamingMessage(run), `unknown ${i}, before`).toBeDefined();
      place(run);
      const expected = toBinary(AgentClientMessageSchema, run);
      const fast = encodeStreamingMessage(run);
      // The state's own unknown fields are written by toBinary inside the hand-written request.
      if (i === 2) expect(fast).toEqual(expected);
      else expect(fast, `unknown ${i}`).toBeUndefined();
      expect(encodeClientMessage(run), `unknown ${i}`).toEqual(expected);
    }
  });
});
