import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { gifImage } from "../../test/support/images.js";
import { type AgentClientMessage, AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { AgentMode } from "../gen/agent/v1/enums_pb.js";
import { checkpointBytes } from "../protocol/cursor/cursor-api.js";
import { encodeClientMessage } from "../protocol/cursor/run-stream.js";
import { encodeStreamingMessage } from "../protocol/cursor/streaming-encode.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { ConversationRecord } from "../stores/types.js";
import { historyFingerprint } from "./history-fingerprint.js";
import { buildRootState, buildRunRequest, planTurn, type RunRequestInput, rebuildPlan } from "./run-request.js";
import type { AgentModeName, HistoryMessage } from "./types.js";

/** `buildRunRequest` as it was: `create()` of the nested inits (the reference for objects and bytes). */
function reference(input: RunRequestInput, state: ConversationStateStructure): AgentClientMessage {
  const { plan } = input;
  if (plan.kind === "continue-turn" || plan.userText === undefined) throw new Error("not a common request");
  const modes: Record<AgentModeName, AgentMode> = { agent: AgentMode.AGENT, ask: AgentMode.ASK, plan: AgentMode.PLAN };
  return create(AgentClientMessageSchema, {
    message: {
      case: "runRequest",
      value: {
        conversationState: state,
        action: {
          action: {
            case: "userMessageAction",
            value: {
              userMessage: { text: plan.userText, messageId: input.messageId, mode: modes[input.mode ?? "agent"] },
            },
          },
        },
        requestedModel: {
          modelId: input.model.modelId,
          parameters: input.model.parameters.map(({ id, value }) => ({ id, value })),
          ...(input.model.maxMode ? { maxMode: true } : {}),
        },
        conversationId: input.conversationId,
        conversationGroupId: input.conversationId,
        runId: input.runId ?? "",
        clientSupportsRoutedModelUpdate: true,
      },
    },
  });
}

/** Texts around the one-, two- and three-byte length varints, in UTF-8 bytes (multi-byte characters included). */
const TEXTS = [
  "",
  "hi",
  "é😀a",
  // Lone surrogates: written as U+FFFD (three bytes), as TextEncoder does.
  "\ud800",
  "a\udc00b😀\ud83d",
  "a".repeat(127),
  "a".repeat(128),
  "é".repeat(63),
  "é".repeat(64),
  "😀".repeat(40),
  "日本語".repeat(1000),
  "x".repeat(16_383),
  "x".repeat(16_384),
  "y".repeat(70_000),
];

const HISTORIES: HistoryMessage[][] = [
  [],
  [{ role: "system", content: "be brief" }],
  [
    { role: "system", content: "sys" },
    { role: "user", content: "first é" },
    { role: "assistant", content: "a", toolCalls: [{ id: "c1", name: "look", arguments: '{"q":1}' }] },
    { role: "tool", toolCallId: "c1", content: "found" },
    { role: "assistant", content: "done", toolCalls: [] },
  ],
  [
    { role: "user", content: "no system prompt" },
    { role: "assistant", content: "ok", toolCalls: [] },
  ],
];

const MODELS: RunRequestInput["model"][] = [
  { modelId: "default", parameters: [], maxMode: false },
  { modelId: "gpt-5", parameters: [{ id: "reasoning", value: "high" }], maxMode: true },
  {
    modelId: "",
    parameters: [
      { id: "", value: "" },
      { id: "fast", value: "" },
      { id: "thinking", value: "é".repeat(100) },
    ],
    maxMode: false,
  },
  { modelId: "claude-4.5-sonnet", parameters: [], maxMode: true },
];

const MODES: (AgentModeName | undefined)[] = [undefined, "agent", "ask", "plan"];

/** The message built, the plain objects equal to `create()`'s, and the bytes written by hand equal to `toBinary`'s. */
function expectSame(input: RunRequestInput, label: string): void {
  const message = buildRunRequest(input);
  if (message.message.case !== "runRequest") throw new Error("not a run request");
  const state = message.message.value.conversationState;
  if (state === undefined) throw new Error("no state");
  const expected = reference(input, state);
  expect(message, label).toStrictEqual(expected);
  const fast = encodeStreamingMessage(message);
  expect(fast, label).toBeDefined();
  const same = Buffer.from(fast ?? []).equals(Buffer.from(toBinary(AgentClientMessageSchema, expected)));
  expect(same, label).toBe(true);
  // The reference message (create()'s objects) takes the same path with the same bytes.
  expect(Buffer.from(encodeClientMessage(expected)).equals(Buffer.from(fast ?? [])), label).toBe(true);
}

function recordFor(covered: readonly HistoryMessage[], checkpoint: Uint8Array): ConversationRecord {
  return {
    conversationId: "c",
    checkpoint,
    coveredMessages: covered.length,
    fingerprint: historyFingerprint(covered),
    blobs: new Map(),
    updatedAt: 0,
  };
}

const id = (n: number) => Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n) & 0xff);

/** Checkpoints: read without reflection (bytes kept) and ones only `fromBinary` reads (string lists, maps). */
const CHECKPOINTS: ConversationStateStructure[] = [
  create(ConversationStateStructureSchema, {}),
  create(ConversationStateStructureSchema, {
    rootPromptMessagesJson: [id(1), id(2)],
    turns: [id(3), id(4), id(5)],
    tokenDetails: { usedTokens: 1234, maxTokens: 200_000 },
    mode: AgentMode.AGENT,
    summary: id(6),
    selfSummaryCount: 2,
  }),
  create(ConversationStateStructureSchema, {
    turns: Array.from({ length: 600 }, (_, i) => id(i)),
    mode: AgentMode.UNSPECIFIED,
  }),
  create(ConversationStateStructureSchema, {
    rootPromptMessagesJson: [id(9)],
    pendingToolCalls: ["call-1"],
    previousWorkspaceUris: ["file:///w/é"],
    fileStates: { "/w/a.ts": id(10), "1": id(11) },
    readPaths: ["/w/a.ts"],
  }),
];

describe("the common run request (plain objects, bytes written by hand)", () => {
  it("rebuilds: every text, history, model and mode give create()'s objects and toBinary's bytes", () => {
    let count = 0;
    for (const [h, history] of HISTORIES.entries()) {
      for (const [t, text] of TEXTS.entries()) {
        for (const [m, model] of MODELS.entries()) {
          const mode = MODES[(t + m) % MODES.length];
          const plan = rebuildPlan([...history, { role: "user", content: text }]);
          const input: RunRequestInput = {
            plan,
            conversationId: t % 3 === 0 ? "" : "conv-é",
            model,
            blobs: createBlobStore(),
            messageId: t % 4 === 1 ? "" : "11111111-2222-4333-8444-555555555555",
            runId: t % 5 === 2 ? "" : "66666666-7777-4888-9999-000000000000",
            mode,
          };
          expectSame(input, `history ${h}, text ${t}, model ${m}`);
          count++;
        }
      }
    }
    expect(count).toBe(HISTORIES.length * TEXTS.length * MODELS.length);
  });

  it("a fresh run id when none is given: the same layout, toBinary's bytes", () => {
    const input: RunRequestInput = {
      plan: rebuildPlan([{ role: "user", content: "hello" }]),
      conversationId: "c",
      model: MODELS[1] as RunRequestInput["model"],
      blobs: createBlobStore(),
      messageId: "m",
    };
    const message = buildRunRequest(input);
    const fast = encodeStreamingMessage(message);
    expect(fast).toBeDefined();
    expect(fast).toEqual(toBinary(AgentClientMessageSchema, message));
  });

  it("continues from every stored checkpoint: the checkpoint's stored bytes or toBinary's, always toBinary's in all", () => {
    const covered: HistoryMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "first" },
    ];
    let count = 0;
    let kept = 0;
    for (const [c, checkpoint] of CHECKPOINTS.entries()) {
      const stored = toBinary(ConversationStateStructureSchema, checkpoint);
      for (const [t, text] of TEXTS.entries()) {
        const messages: HistoryMessage[] = [
          ...covered,
          { role: "assistant", content: "answer", toolCalls: [] },
          { role: "user", content: text },
        ];
        const plan = planTurn(messages, recordFor(covered, stored));
        if (plan.kind !== "continue") throw new Error(`checkpoint ${c}: ${plan.kind}`);
        // The plan's state is fromBinary's value, whichever way it was read.
        expect(plan.checkpoint).toStrictEqual(fromBinary(ConversationStateStructureSchema, stored));
        if (checkpointBytes(plan.checkpoint) !== undefined) kept++;
        const model = MODELS[t % MODELS.length] as RunRequestInput["model"];
        expectSame(
          { plan, conversationId: "conv", model, blobs: createBlobStore(), messageId: "m", runId: "r", mode: "ask" },
          `checkpoint ${c}, text ${t}`,
        );
        count++;
      }
    }
    expect(count).toBe(CHECKPOINTS.length * TEXTS.length);
    // The first three checkpoints are read without reflection and sent as stored; the fourth needs fromBinary.
    expect(kept).toBe(3 * TEXTS.length);
  });

  it("the rebuild's root state is create()'s", () => {
    const history = HISTORIES[2] as HistoryMessage[];
    const state = buildRootState(history, createBlobStore());
    expect(state).toStrictEqual(
      create(ConversationStateStructureSchema, { rootPromptMessagesJson: state.rootPromptMessagesJson }),
    );
    expect(buildRootState([], createBlobStore())).toStrictEqual(create(ConversationStateStructureSchema, {}));
  });
});

describe("run requests that keep create() and toBinary", () => {
  const history: HistoryMessage[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "look", images: [{ data: gifImage(2, 3), mimeType: "image/gif" }] },
  ];

  it("images, the resume action and a continued turn are built with create() and encoded with toBinary", () => {
    const inputs: RunRequestInput[] = [
      // A user message with an image: selected_context.
      { plan: rebuildPlan(history), conversationId: "c", model: MODELS[0], blobs: createBlobStore(), messageId: "m" },
      // Only an assistant turn after the history: resume_action.
      {
        plan: rebuildPlan([...history, { role: "assistant", content: "a", toolCalls: [] }]),
        conversationId: "c",
        model: MODELS[1],
        blobs: createBlobStore(),
        messageId: "m",
      },
    ] as RunRequestInput[];
    const covered = history.slice(0, 1);
    const stored = toBinary(ConversationStateStructureSchema, CHECKPOINTS[1] as ConversationStateStructure);
    const turn = planTurn(
      [
        { role: "system", content: "sys" },
        { role: "user", content: "go" },
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] },
        { role: "tool", toolCallId: "c1", content: "r" },
      ],
      recordFor(covered, stored),
    );
    expect(turn.kind).toBe("continue-turn");
    inputs.push({
      plan: turn,
      conversationId: "c",
      model: MODELS[0],
      blobs: createBlobStore(),
      messageId: "m",
    } as RunRequestInput);
    for (const [i, input] of inputs.entries()) {
      const message = buildRunRequest(input);
      expect(encodeStreamingMessage(message), `input ${i}`).toBeUndefined();
      expect(encodeClientMessage(message), `input ${i}`).toEqual(toBinary(AgentClientMessageSchema, message));
    }
  });
});
