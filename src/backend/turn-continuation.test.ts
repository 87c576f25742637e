import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ConversationStateStructureSchema,
  ConversationStepSchema,
  ConversationTurnStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import { UserMessageSchema } from "../gen/agent/v1/user_message_pb.js";
import { toHex } from "../stores/blob-id.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { ConversationRecord } from "../stores/types.js";
import { historyFingerprint } from "./history-fingerprint.js";
import { buildRunRequest, planTurn } from "./run-request.js";
import type { HistoryMessage } from "./types.js";
import { decodeArgumentsMap } from "./value-codec.js";

const priorTurn = new Uint8Array(32).fill(7);
const covered: HistoryMessage[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "first" },
];
const firstReply: HistoryMessage = { role: "assistant", content: "hello", toolCalls: [] };
const call = (id: string, name = "lookup", args = '{"q":"x"}'): HistoryMessage => ({
  role: "assistant",
  content: "",
  toolCalls: [{ id, name, arguments: args }],
});
const result = (id: string, content: string, isError?: boolean): HistoryMessage => ({
  role: "tool",
  toolCallId: id,
  content,
  ...(isError === undefined ? {} : { isError }),
});

function recordFor(messages: readonly HistoryMessage[]): ConversationRecord {
  const state = create(ConversationStateStructureSchema, { turns: [priorTurn] });
  return {
    conversationId: "c",
    checkpoint: toBinary(ConversationStateStructureSchema, state),
    coveredMessages: messages.length,
    fingerprint: historyFingerprint(messages),
    blobs: new Map(),
    updatedAt: 0,
  };
}

describe("planTurn for tool results of a turn that is gone", () => {
  it("continues from the checkpoint when one user turn with its tool calls and results follows it", () => {
    const messages = [...covered, firstReply, { role: "user", content: "go" } as const, call("c1"), result("c1", "42")];
    const plan = planTurn(messages, recordFor(covered));
    expect(plan.kind).toBe("continue-turn");
    if (plan.kind !== "continue-turn") return;
    expect(plan.turn.user.content).toBe("go");
    expect(plan.turn.steps.map((m) => m.role)).toEqual(["assistant", "tool"]);
    expect(plan.checkpoint.turns).toEqual([priorTurn]);
  });

  it("continues across several rounds of calls and results within the turn", () => {
    const messages = [
      ...covered,
      firstReply,
      { role: "user", content: "go" } as const,
      call("c1"),
      result("c1", "a"),
      call("c2"),
      result("c2", "b"),
    ];
    const plan = planTurn(messages, recordFor(covered));
    expect(plan.kind === "continue-turn" ? plan.turn.steps.length : -1).toBe(4);
  });

  it("rebuilds when the history does not extend the checkpoint", () => {
    const edited = [covered[0] as HistoryMessage, { role: "user", content: "FIRST" } as const, firstReply];
    const messages = [...edited, { role: "user", content: "go" } as const, call("c1"), result("c1", "42")];
    expect(planTurn(messages, recordFor(covered)).kind).toBe("rebuild");
    expect(planTurn(messages, undefined).kind).toBe("rebuild");
  });

  it("rebuilds when two user messages, none, a system message or an unknown result follow the checkpoint", () => {
    const go = { role: "user", content: "go" } as const;
    const twoUsers = [...covered, firstReply, go, { role: "user", content: "again" } as const, call("c1")];
    expect(planTurn([...twoUsers, result("c1", "r")], recordFor(covered)).kind).toBe("rebuild");
    // The checkpoint already covers the turn's user message (no new user message after it).
    expect(planTurn([...covered, call("c1"), result("c1", "r")], recordFor(covered)).kind).toBe("rebuild");
    const system = [...covered, { role: "system", content: "s2" } as const, go, call("c1"), result("c1", "r")];
    expect(planTurn(system, recordFor(covered)).kind).toBe("rebuild");
    const orphan = [...covered, firstReply, go, call("c1"), result("c9", "r")];
    expect(planTurn(orphan, recordFor(covered)).kind).toBe("rebuild");
  });

  it("keeps the usual plans when a user message follows the tool results", () => {
    const messages: HistoryMessage[] = [
      ...covered,
      firstReply,
      { role: "user", content: "go" },
      call("c1"),
      result("c1", "42"),
      { role: "assistant", content: "done", toolCalls: [] },
      { role: "user", content: "next" },
    ];
    // The checkpoint of the earlier turn: the new user message comes after a second user message → rebuild.
    expect(planTurn(messages, recordFor(covered)).kind).toBe("rebuild");
    // The checkpoint of the tool turn: continue with the new user message, as before.
    expect(planTurn(messages, recordFor(messages.slice(0, 6)))).toMatchObject({ kind: "continue", userText: "next" });
  });
});

describe("buildRunRequest for a continued turn", () => {
  it("appends one turn blob (user message, text and tool-call steps) to the checkpoint and sends resume_action", () => {
    const messages: HistoryMessage[] = [
      ...covered,
      firstReply,
      { role: "user", content: "go" },
      { role: "assistant", content: "checking", toolCalls: [{ id: "c1", name: "look up", arguments: '{"q":"x"}' }] },
      result("c1", "42"),
      call("c2", "lookup", "{}"),
      result("c2", "boom", true),
    ];
    const plan = planTurn(messages, recordFor(covered));
    const blobs = createBlobStore();
    const message = buildRunRequest({
      plan,
      conversationId: "c",
      model: { modelId: "default", parameters: [], maxMode: false },
      blobs,
      messageId: "m1",
      modelToolName: (name) => name.replace(" ", "_"),
    });
    if (message.message.case !== "runRequest") throw new Error("not a run request");
    const run = message.message.value;
    expect(run.action?.action.case).toBe("resumeAction");
    const state = run.conversationState;
    expect(state?.rootPromptMessagesJson).toEqual([]);
    expect(state?.turns).toHaveLength(2);
    expect(state?.turns[0]).toEqual(priorTurn);
    // Only the new turn's blobs: the turn, its user message and its three steps.
    expect(blobs.size).toBe(5);
    const blob = (id: Uint8Array) => {
      const data = blobs.get(id);
      if (data === undefined) throw new Error(`missing blob ${toHex(id)}`);
      return data;
    };
    const turn = fromBinary(ConversationTurnStructureSchema, blob(state?.turns[1] ?? new Uint8Array())).turn;
    if (turn.case !== "agentConversationTurn") throw new Error("not an agent turn");
    expect(fromBinary(UserMessageSchema, blob(turn.value.userMessage)).text).toBe("go");
    const steps = turn.value.steps.map((id) => fromBinary(ConversationStepSchema, blob(id)).message);
    expect(steps.map((s) => s.case)).toEqual(["assistantMessage", "toolCall", "toolCall"]);
    expect(steps[0]?.value).toMatchObject({ text: "checking" });
    const [first, second] = steps.slice(1).map((s) => {
      if (s.case !== "toolCall" || s.value.tool.case !== "mcpToolCall") throw new Error("not an mcp tool call");
      return s.value.tool.value;
    });
    expect(first?.args).toMatchObject({
      name: "look_up",
      toolName: "look_up",
      toolCallId: "c1",
      providerIdentifier: "cursor-bridge",
    });
    expect(JSON.parse(decodeArgumentsMap(first?.args?.args ?? {}))).toEqual({ q: "x" });
    expect(first?.result?.result).toMatchObject({ case: "success" });
    const content = first?.result?.result.case === "success" ? first.result.result.value.content : [];
    expect(content.map((c) => (c.content.case === "text" ? c.content.value.text : ""))).toEqual(["42"]);
    expect(second?.result?.result).toMatchObject({ case: "error", value: { error: "boom" } });
  });
});
