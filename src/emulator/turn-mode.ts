/**
 * The scripted model asking to switch the agent mode (`[[emu:switch-mode]]`, docs/protocol.md §4.9):
 * `tool_call_started` with a `switch_mode_tool_call`, then `switch_mode_request_query` asking the client, then after
 * its answer `tool_call_completed` with `success{from_mode_id, to_mode_id}` (approved) or `rejected{reason}`.
 */
import { randomUUID } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import { AgentMode } from "../gen/agent/v1/enums_pb.js";
import type { InteractionResponse } from "../gen/agent/v1/interaction_query_pb.js";
import type { ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import { badRequest } from "./errors.js";
import type { PlannedModeSwitch } from "./scripted-model.js";
import type { TurnChannel } from "./turn-channel.js";

type ToolCallInit = MessageInitShape<typeof ToolCallSchema>;

/** The lower-case id of an `AgentMode` (`agent`, `ask`, `plan`…; `agent` when unspecified). */
export function modeId(mode: AgentMode | undefined): string {
  if (mode === undefined || mode === AgentMode.UNSPECIFIED) return "agent";
  return (AgentMode[mode] ?? "agent").toLowerCase();
}

/** Runs the plan's mode switches in order from `fromMode`; returns the reply lines. */
export async function runModeSwitches(
  channel: TurnChannel,
  switches: readonly PlannedModeSwitch[],
  fromMode: string,
  steps: ConversationStep[],
): Promise<string[]> {
  const lines: string[] = [];
  let current = fromMode;
  for (const [index, planned] of switches.entries()) {
    const ids = {
      callId: `call_mode_${index + 1}_${randomUUID().slice(0, 8)}`,
      modelCallId: `${randomUUID()}-m${index}`,
    };
    const args = {
      targetModeId: planned.mode,
      explanation: planned.explanation,
      toolCallId: `toolu_mode_${randomUUID().replaceAll("-", "").slice(0, 20)}`,
    };
    const started: ToolCallInit = { tool: { case: "switchModeToolCall", value: { args } } };
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallStarted", value: { ...ids, toolCall: started } } },
      },
    });
    const response = await channel.ask({ case: "switchModeRequestQuery", value: { args } });
    const rejection = rejectionOf(response);
    const result =
      rejection === undefined
        ? { result: { case: "success" as const, value: { fromModeId: current, toModeId: planned.mode } } }
        : { result: { case: "rejected" as const, value: { reason: rejection } } };
    const toolCall: ToolCallInit = { tool: { case: "switchModeToolCall", value: { args, result } } };
    channel.send({
      message: {
        case: "interactionUpdate",
        value: { message: { case: "toolCallCompleted", value: { ...ids, toolCall } } },
      },
    });
    steps.push(create(ConversationStepSchema, { message: { case: "toolCall", value: toolCall } }));
    if (rejection === undefined) {
      current = planned.mode;
      lines.push(`Mode switch to ${planned.mode}: approved`);
    } else lines.push(`Mode switch to ${planned.mode} was rejected: ${rejection}`);
  }
  return lines;
}

/** The client's rejection reason, or undefined when it approved; an answer of another kind is a protocol error. */
function rejectionOf(response: InteractionResponse): string | undefined {
  const result = response.result;
  if (result.case !== "switchModeRequestResponse") {
    throw badRequest(
      `interaction_response ${response.id} is ${result.case ?? "empty"}, expected switchModeRequestResponse.`,
    );
  }
  const approval = result.value.result;
  if (approval.case === "approved") return undefined;
  if (approval.case === "rejected") return approval.value.reason || "no reason given";
  throw badRequest(`interaction_response ${response.id} answers the mode switch with neither approved nor rejected.`);
}
