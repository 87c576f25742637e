import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InteractionUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import { subagentSteps } from "./subagent-steps.js";

const bytesOf = (update: Parameters<typeof create<typeof InteractionUpdateSchema>>[1]) =>
  toBinary(InteractionUpdateSchema, create(InteractionUpdateSchema, update));

describe("subagent steps from task_tool_call_delta", () => {
  it("reads nested tool calls, text and nested tasks, and reports bytes that do not decode", () => {
    const read = { tool: { case: "readToolCall" as const, value: { args: { path: "a.ts" } } } };
    expect(
      subagentSteps(bytesOf({ message: { case: "toolCallStarted", value: { callId: "n1", toolCall: read } } })),
    ).toEqual([{ kind: "tool", toolCallId: "n1", title: "Read a.ts", toolKind: "read", status: "started" }]);
    expect(subagentSteps(bytesOf({ message: { case: "textDelta", value: { text: "found it" } } }))).toEqual([
      { kind: "text", text: "found it" },
    ]);
    const inner = bytesOf({ message: { case: "toolCallCompleted", value: { callId: "n2", toolCall: read } } });
    const nested = bytesOf({
      message: {
        case: "toolCallDelta",
        value: {
          callId: "t2",
          toolCallDelta: { delta: { case: "taskToolCallDelta", value: { interactionUpdate: inner } } },
        },
      },
    });
    expect(subagentSteps(nested)).toEqual([
      { kind: "tool", toolCallId: "n2", title: "Read a.ts", toolKind: "read", status: "completed" },
    ]);
    expect(subagentSteps(new Uint8Array([0xff, 0xff, 0xff]))[0]).toMatchObject({ kind: "text" });
  });
});
