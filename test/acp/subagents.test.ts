/**
 * Cursor's subagents in the editor, in-process on the real engine and emulator (`[[emu:task …]]` runs a task whose
 * nested tool calls arrive in `task_tool_call_delta`, cursor-protocol-addendum-3 T4): the client sees both nested
 * calls as the task's tool_call_update content.
 */
import { PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { useAcpFixture } from "./support.js";

const acp = useAcpFixture("cursor-bridge-acp-subagents-");

const TASK = '[[emu:task {"description":"look around","steps":[{"read":"src/a.ts"},{"grep":"TODO"}]}]]';

async function runTask(clientCapabilities: Record<string, unknown>) {
  const connected = acp.connect();
  const agent = connected.connection.agent;
  await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities });
  const { sessionId } = await agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
  connected.script.updates.length = 0;
  const response = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: TASK }] });
  return { response, sessionId, updates: [...connected.script.updates] };
}

describe("Cursor's subagents in ACP", () => {
  it("shows both nested calls as the task's tool_call_update content", async () => {
    const { response, sessionId, updates } = await runTask({});
    expect(response.stopReason).toBe("end_turn");
    expect(updates.every((n) => n.sessionId === sessionId)).toBe(true);
    const task = updates.map((n) => n.update).filter((u) => "toolCallId" in u);
    expect(task[0]).toMatchObject({ sessionUpdate: "tool_call", title: "Task: look around", status: "in_progress" });
    const last = task.at(-1);
    expect(last).toMatchObject({ sessionUpdate: "tool_call_update", status: "completed" });
    expect(JSON.stringify(last)).toContain("✓ Read src/a.ts\\n✓ Grep TODO");
    const text = updates
      .map((n) => n.update)
      .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(text).toBe("Task look around: 2 steps");
  });
});
