/**
 * `[[emu:task …]]`: Cursor's task tool running a subagent, a server-side tool call (cursor-protocol-addendum-3 T4):
 * `tool_call_started` with a `task_tool_call`, then for every nested step a `tool_call_started` and a
 * `tool_call_completed` of the subagent, each serialized into a `tool_call_delta` whose `task_tool_call_delta`
 * carries the nested `InteractionUpdate`, then the task's `tool_call_completed` with a success result.
 */
import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import { InteractionUpdateSchema } from "../gen/agent/v1/interaction_pb.js";
import { type ToolCall, ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import type { ScriptedTask, ScriptedTaskStep } from "./directives.js";
import type { TurnChannel } from "./turn-channel.js";

function nestedCall(step: ScriptedTaskStep): ToolCall {
  switch (step.tool) {
    case "read":
      return create(ToolCallSchema, { tool: { case: "readToolCall", value: { args: { path: step.path } } } });
    case "grep":
      return create(ToolCallSchema, { tool: { case: "grepToolCall", value: { args: { pattern: step.pattern } } } });
    case "shell":
      return create(ToolCallSchema, { tool: { case: "shellToolCall", value: { args: { command: step.command } } } });
  }
}

/** Sends the task and its subagent's steps; returns the step to store. */
export function sendTask(channel: TurnChannel, task: ScriptedTask): ConversationStep {
  const callId = `call_task_${randomUUID().slice(0, 8)}`;
  const modelCallId = randomUUID();
  const args = { description: task.description, prompt: task.description };
  const started = create(ToolCallSchema, { tool: { case: "taskToolCall", value: { args } } });
  channel.send({
    message: {
      case: "interactionUpdate",
      value: { message: { case: "toolCallStarted", value: { callId, modelCallId, toolCall: started } } },
    },
  });
  const nested = (update: Parameters<typeof create<typeof InteractionUpdateSchema>>[1]) =>
    channel.send({
      message: {
        case: "interactionUpdate",
        value: {
          message: {
            case: "toolCallDelta",
            value: {
              callId,
              modelCallId,
              toolCallDelta: {
                delta: {
                  case: "taskToolCallDelta",
                  value: {
                    interactionUpdate: toBinary(InteractionUpdateSchema, create(InteractionUpdateSchema, update)),
                  },
                },
              },
            },
          },
        },
      },
    });
  task.steps.forEach((step, i) => {
    const nestedId = `${callId}_step_${i + 1}`;
    const toolCall = nestedCall(step);
    nested({ message: { case: "toolCallStarted", value: { callId: nestedId, toolCall } } });
    nested({ message: { case: "toolCallCompleted", value: { callId: nestedId, toolCall } } });
  });
  const completed = create(ToolCallSchema, {
    tool: {
      case: "taskToolCall",
      value: { args, result: { result: { case: "success", value: { conversationSteps: [], isBackground: false } } } },
    },
  });
  channel.send({
    message: {
      case: "interactionUpdate",
      value: { message: { case: "toolCallCompleted", value: { callId, modelCallId, toolCall: completed } } },
    },
  });
  return create(ConversationStepSchema, { message: { case: "toolCall", value: completed } });
}
