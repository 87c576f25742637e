/**
 * Cursor's subagents (its task tool, cursor-protocol-addendum-3 T4) in the editor. The task is a `tool_call` of the
 * session (kind `think`, titled by the task's description), and the subagent's nested tool calls and text are that
 * call's `tool_call_update` content: one line per nested call with its status (… started, ✓ completed, ✗ failed),
 * then the subagent's text. Nothing the subagent did is dropped. (ACP's unstable `subagent_update`, a child session
 * per subagent, needs the SDK's unstable schema, which this agent does not speak: the stable one strips the
 * client's `subagents` capability and refuses the update.)
 */
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import type { SubagentStep } from "../../backend/types.js";

interface Task {
  calls: Map<string, { title: string; status: string }>;
  text: string;
}

const MARK: Record<string, string> = { started: "…", completed: "✓", failed: "✗" };

/** The subagent view of one prompt: feed it every `subagent` event; it emits the parent session's updates. */
export function createSubagentView(
  emit: (update: SessionUpdate) => Promise<void>,
): (taskCallId: string, step: SubagentStep) => Promise<void> {
  const tasks = new Map<string, Task>();
  const content = (task: Task): ToolCallContent[] => {
    const lines = [...task.calls.values()].map((call) => `${MARK[call.status] ?? "·"} ${call.title}`);
    const text = [...lines, ...(task.text === "" ? [] : ["", task.text])].join("\n");
    return text === "" ? [] : [{ type: "content", content: { type: "text", text } }];
  };

  return async (taskCallId, step) => {
    let task = tasks.get(taskCallId);
    if (task === undefined) {
      task = { calls: new Map(), text: "" };
      tasks.set(taskCallId, task);
    }
    switch (step.kind) {
      case "started": {
        const title = step.description === "" ? "Task" : `Task: ${step.description}`;
        await emit({ sessionUpdate: "tool_call", toolCallId: taskCallId, title, kind: "think", status: "in_progress" });
        return;
      }
      case "tool":
        task.calls.set(step.toolCallId, { title: step.title, status: step.status });
        await emit({ sessionUpdate: "tool_call_update", toolCallId: taskCallId, content: content(task) });
        return;
      case "text":
        task.text += step.text;
        await emit({ sessionUpdate: "tool_call_update", toolCallId: taskCallId, content: content(task) });
        return;
      case "ended": {
        const status = step.failed ? "failed" : "completed";
        await emit({ sessionUpdate: "tool_call_update", toolCallId: taskCallId, status, content: content(task) });
        tasks.delete(taskCallId);
        return;
      }
    }
  };
}
