import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { gifImage, pngImage } from "../../test/support/images.js";
import { AgentRunRequestSchema } from "../gen/agent/v1/agent_pb.js";
import { ConversationStateStructureSchema } from "../gen/agent/v1/conversation_state_pb.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { ConversationRecord } from "../stores/types.js";
import { historyFingerprint } from "./history-fingerprint.js";
import { buildRootState, buildRunRequest, planTurn, rebuildPlan } from "./run-request.js";
import type { HistoryMessage } from "./types.js";

const base: HistoryMessage[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "first" },
];

function recordFor(covered: readonly HistoryMessage[]): ConversationRecord {
  const checkpoint = toBinary(ConversationStateStructureSchema, create(ConversationStateStructureSchema, {}));
  return {
    conversationId: "c",
    checkpoint,
    coveredMessages: covered.length,
    fingerprint: historyFingerprint(covered),
    blobs: new Map(),
    updatedAt: 0,
  };
}

describe("planTurn", () => {
  const reply: HistoryMessage = { role: "assistant", content: "answer", toolCalls: [] };

  it("continues with only the new user message when history extends the checkpoint", () => {
    const plan = planTurn([...base, reply, { role: "user", content: "second" }], recordFor(base));
    expect(plan).toMatchObject({ kind: "continue", userText: "second" });
  });

  it("continues across the assistant/tool messages of a resumed tool round trip", () => {
    const messages: HistoryMessage[] = [
      ...base,
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", content: "r" },
      reply,
      { role: "user", content: "next" },
    ];
    expect(planTurn(messages, recordFor(base)).kind).toBe("continue");
  });

  it("rebuilds when the history was edited, has extra user messages, or no record exists", () => {
    const edited: HistoryMessage[] = [
      base[0] as HistoryMessage,
      { role: "user", content: "FIRST" },
      reply,
      { role: "user", content: "x" },
    ];
    expect(planTurn(edited, recordFor(base)).kind).toBe("rebuild");
    const twoUsers = [...base, reply, { role: "user", content: "a" } as const, { role: "user", content: "b" } as const];
    expect(planTurn(twoUsers, recordFor(base)).kind).toBe("rebuild");
    expect(planTurn([...base, reply, { role: "user", content: "x" }], undefined).kind).toBe("rebuild");
  });

  it("rebuilds with resume when the new input is only tool results of the checkpointed turn's own user message", () => {
    const messages: HistoryMessage[] = [
      ...base,
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: '{"a":1}' }] },
      { role: "tool", toolCallId: "c1", content: "r" },
    ];
    const plan = planTurn(messages, recordFor(base));
    expect(plan).toMatchObject({ kind: "rebuild", userText: undefined });
  });
});

describe("buildRunRequest", () => {
  it("puts the system prompt and history in root prompt blobs and the last user message in the action", () => {
    const blobs = createBlobStore();
    const messages: HistoryMessage[] = [
      ...base,
      { role: "assistant", content: "a", toolCalls: [{ id: "c1", name: "look", arguments: '{"q":1}' }] },
      { role: "tool", toolCallId: "c1", content: "found" },
      { role: "user", content: "now" },
    ];
    const message = buildRunRequest({
      plan: rebuildPlan(messages),
      conversationId: "conv",
      model: { modelId: "default", parameters: [], maxMode: false },
      blobs,
      messageId: "m1",
    });
    if (message.message.case !== "runRequest") throw new Error("not a run request");
    const run = message.message.value;
    expect(run.conversationId).toBe("conv");
    expect(run.conversationGroupId).toBe("conv");
    expect(run.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // requested_model alone: a bare base id inside model_details is not_found (docs/protocol.md §6.1).
    expect(run.modelDetails).toBeUndefined();
    // Client tools go in RequestContext.tools (docs/protocol.md §5.2), never in the run request.
    expect(run.mcpTools).toBeUndefined();
    expect(run.requestedModel?.modelId).toBe("default");
    expect(run.requestedModel?.parameters).toEqual([]);
    // Cursor then names the model `auto` picked (routed_model, cursor-protocol-addendum-2.md §4).
    expect(run.clientSupportsRoutedModelUpdate).toBe(true);
    expect(run.action?.action.case).toBe("userMessageAction");
    const ids = run.conversationState?.rootPromptMessagesJson ?? [];
    const decoded = ids.map((id) => JSON.parse(new TextDecoder().decode(blobs.get(id))) as unknown);
    expect(decoded).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "first" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "a" },
          { type: "tool-call", toolCallId: "c1", toolName: "look", args: { q: 1 } },
        ],
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "look", result: "found" }] },
    ]);
    for (const id of ids) expect(id).toHaveLength(32);
  });

  it("keeps a failed tool result marked as an error when the state is rebuilt", () => {
    const blobs = createBlobStore();
    const state = buildRootState(
      [
        { role: "user", content: "read it" },
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "read", arguments: "{}" }] },
        { role: "tool", toolCallId: "c1", content: "ENOENT: no such file", isError: true },
      ],
      blobs,
    );
    const decoded = state.rootPromptMessagesJson.map(
      (id) => JSON.parse(new TextDecoder().decode(blobs.get(id))) as { role: string; content: unknown },
    );
    expect(decoded.at(-1)).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c1", toolName: "read", result: "ENOENT: no such file", isError: true },
      ],
    });
  });

  it("sends resume_action when there is no new user message", () => {
    const message = buildRunRequest({
      plan: rebuildPlan([...base, { role: "tool", toolCallId: "x", content: "r" }]),
      conversationId: "conv",
      model: { modelId: "m", parameters: [], maxMode: false },
      blobs: createBlobStore(),
      messageId: "m1",
    });
    expect(message.message.case === "runRequest" && message.message.value.action?.action.case).toBe("resumeAction");
  });
});

describe("conversation_group_id and run_id (docs/protocol.md §4.5)", () => {
  it("sends them on the wire as fields 16 and 25, a new run_id per Run", () => {
    const build = (runId?: string) =>
      buildRunRequest({
        plan: rebuildPlan([{ role: "user", content: "hi" }]),
        conversationId: "conv",
        model: { modelId: "default", parameters: [], maxMode: false },
        blobs: createBlobStore(),
        messageId: "m",
        ...(runId === undefined ? {} : { runId }),
      });
    const first = build();
    const second = build();
    if (first.message.case !== "runRequest" || second.message.case !== "runRequest") throw new Error("no run");
    expect(first.message.value.runId).not.toBe(second.message.value.runId);
    const fixed = build("r-1");
    if (fixed.message.case !== "runRequest") throw new Error("no run");
    const bytes = toBinary(AgentRunRequestSchema, fixed.message.value);
    const hex = Buffer.from(bytes).toString("hex");
    // field 16, wire type 2 = 0x82 0x01; field 25, wire type 2 = 0xca 0x01
    expect(hex).toContain(`8201${Buffer.from([4]).toString("hex")}${Buffer.from("conv").toString("hex")}`);
    expect(hex).toContain(`ca01${Buffer.from([3]).toString("hex")}${Buffer.from("r-1").toString("hex")}`);
  });
});

describe("images (docs/protocol.md §5.5)", () => {
  const png = pngImage(3, 2);
  const gif = gifImage(9, 4);

  it("sends the new user message's images inline as SelectedImage entries, typed by their bytes", () => {
    const messages: HistoryMessage[] = [
      {
        role: "user",
        content: "look",
        images: [
          { mimeType: "image/jpeg", data: png },
          { mimeType: "image/gif", data: gif },
        ],
      },
    ];
    const message = buildRunRequest({
      plan: rebuildPlan(messages),
      conversationId: "conv",
      model: { modelId: "default", parameters: [], maxMode: false },
      blobs: createBlobStore(),
      messageId: "m",
    });
    if (message.message.case !== "runRequest") throw new Error("no run");
    const action = message.message.value.action?.action;
    if (action?.case !== "userMessageAction") throw new Error("no user message");
    const images = action.value.userMessage?.selectedContext?.selectedImages ?? [];
    expect(
      images.map((image) => [image.mimeType, image.path, image.dimension?.width, image.dimension?.height]),
    ).toEqual([
      ["image/png", "image-1.png", 3, 2],
      ["image/gif", "image-2.gif", 9, 4],
    ]);
    expect(images[0]?.dataOrBlobId).toEqual({ case: "data", value: png });
    expect(images[0]?.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(images[0]?.uuid).not.toBe(images[1]?.uuid);
    // A turn without images sends no selected_context at all.
    const plain = buildRunRequest({
      plan: rebuildPlan([{ role: "user", content: "hi" }]),
      conversationId: "conv",
      model: { modelId: "default", parameters: [], maxMode: false },
      blobs: createBlobStore(),
      messageId: "m",
    });
    const plainAction = plain.message.case === "runRequest" ? plain.message.value.action?.action : undefined;
    expect(plainAction?.case === "userMessageAction" && plainAction.value.userMessage?.selectedContext).toBeUndefined();
  });

  it("carries the images of earlier turns of a rebuilt history in their root prompt message", () => {
    const blobs = createBlobStore();
    const messages: HistoryMessage[] = [
      { role: "user", content: "first", images: [{ mimeType: "image/png", data: png }] },
      { role: "assistant", content: "seen", toolCalls: [] },
      { role: "user", content: "again" },
    ];
    const message = buildRunRequest({
      plan: rebuildPlan(messages),
      conversationId: "conv",
      model: { modelId: "default", parameters: [], maxMode: false },
      blobs,
      messageId: "m",
    });
    if (message.message.case !== "runRequest") throw new Error("no run");
    const [firstId] = message.message.value.conversationState?.rootPromptMessagesJson ?? [];
    const stored = JSON.parse(new TextDecoder().decode(blobs.get(firstId as Uint8Array)));
    expect(stored).toEqual({
      role: "user",
      content: [
        { type: "text", text: "first" },
        { type: "image", image: png.toString("base64"), mediaType: "image/png" },
      ],
    });
  });
});

describe("requested_model", () => {
  it("carries the base id, its parameters and max mode, and no model_details", () => {
    const message = buildRunRequest({
      plan: rebuildPlan([{ role: "user", content: "hi" }]),
      conversationId: "conv",
      model: {
        modelId: "claude-opus-4-8",
        parameters: [
          { id: "thinking", value: "true" },
          { id: "context", value: "1m" },
        ],
        maxMode: true,
      },
      blobs: createBlobStore(),
      messageId: "m1",
    });
    if (message.message.case !== "runRequest") throw new Error("not a run request");
    const run = message.message.value;
    expect(run.modelDetails).toBeUndefined();
    expect(run.requestedModel?.modelId).toBe("claude-opus-4-8");
    expect(run.requestedModel?.parameters.map((p) => [p.id, p.value])).toEqual([
      ["thinking", "true"],
      ["context", "1m"],
    ]);
    expect(run.requestedModel?.maxMode).toBe(true);
  });
});
