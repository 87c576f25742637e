/**
 * `[[emu:todos …]]`: Cursor's todo list as its agent updates it, a server-side tool call (no exec round trip):
 * `tool_call_started` and `tool_call_completed` carrying an `update_todos_tool_call` (docs/protocol.md §4.10).
 */

import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type ConversationStep, ConversationStepSchema } from "../gen/agent/v1/conversation_state_pb.js";
import { TodoStatus } from "../gen/agent/v1/enums_pb.js";
import { ToolCallSchema } from "../gen/agent/v1/tool_calls_pb.js";
import type { ScriptedTodo } from "./directives.js";
import type { TurnChannel } from "./turn-channel.js";

const STATUS: Record<ScriptedTodo["status"], TodoStatus> = {
  pending: TodoStatus.PENDING,
  in_progress: TodoStatus.IN_PROGRESS,
  completed: TodoStatus.COMPLETED,
  cancelled: TodoStatus.CANCELLED,
};

/** Sends the todo list as a started and completed update_todos call; returns the step to store. */
export function sendTodos(channel: TurnChannel, todos: readonly ScriptedTodo[]): ConversationStep {
  const now = BigInt(Date.now());
  const items = todos.map((todo, i) => ({
    id: `todo-${i + 1}`,
    content: todo.content,
    status: STATUS[todo.status],
    createdAt: now,
    updatedAt: now,
  }));
  const callId = `call_todos_${randomUUID().slice(0, 8)}`;
  const modelCallId = randomUUID();
  const started = create(ToolCallSchema, { tool: { case: "updateTodosToolCall", value: { args: { todos: items } } } });
  const completed = create(ToolCallSchema, {
    tool: {
      case: "updateTodosToolCall",
      value: { args: { todos: items }, result: { result: { case: "success", value: { todos: items } } } },
    },
  });
  channel.send({
    message: {
      case: "interactionUpdate",
      value: { message: { case: "toolCallStarted", value: { callId, modelCallId, toolCall: started } } },
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
