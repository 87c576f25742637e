/**
 * Slash commands and usage in-process, on the real engine and emulator: `available_commands_update` after
 * `session/new`, `/plan` and `/model` switching through the config options without a Cursor Run, `/usage`,
 * `/compact` continuing in a new Cursor conversation seeded with the summary, and `usage_update` after a prompt.
 */
import { type ClientCapabilities, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { useAcpFixture } from "./support.js";

const FULL: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

const acp = useAcpFixture("cursor-bridge-acp-commands-");

function textOf(updates: SessionNotification[]): string {
  return updates
    .map((n) => n.update)
    .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
    .join("");
}

const runs = () => acp.upstream.emulator.stats().runStreams + acp.upstream.emulator.stats().runSseStreams;

async function editor() {
  const connected = acp.connect();
  const agent = connected.connection.agent;
  await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: FULL });
  const session = await agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
  const prompt = async (text: string) => {
    connected.script.updates.length = 0;
    const response = await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    });
    return { response, updates: [...connected.script.updates] };
  };
  return { ...connected, agent, session, prompt };
}

async function until<T>(find: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("ACP slash commands", () => {
  it("announces the commands after session/new", async () => {
    const { script, session } = await editor();
    const announced = await until(() =>
      script.updates.find(
        (n) => n.sessionId === session.sessionId && n.update.sessionUpdate === "available_commands_update",
      ),
    );
    const names =
      announced.update.sessionUpdate === "available_commands_update"
        ? announced.update.availableCommands.map((c) => c.name)
        : [];
    expect(names).toEqual(["plan", "ask", "agent", "model", "usage", "compact"]);
  });

  it("switches mode and model without sending the command to Cursor", async () => {
    const { prompt } = await editor();
    const before = runs();
    const plan = await prompt("/plan");
    expect(plan.response.stopReason).toBe("end_turn");
    const updates = plan.updates.map((n) => n.update);
    expect(updates).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
    expect(updates.some((u) => u.sessionUpdate === "config_option_update")).toBe(true);
    await prompt("/model gpt-5.2");
    expect(runs()).toBe(before);
    const echoed = await prompt("[[emu:echo-model]]");
    expect(textOf(echoed.updates)).toContain("Model: gpt-5.2");
    const unknown = await prompt("/model gpt-0").catch((error: unknown) => error);
    expect(unknown).toMatchObject({ code: -32602 });
    // A word Cursor knows nothing of as a command is an ordinary prompt.
    expect(textOf((await prompt("/etc/hosts is a file")).updates)).toBe("You said: /etc/hosts is a file");
  });

  it("answers /usage with the plan usage", async () => {
    const { prompt } = await editor();
    const before = runs();
    const { updates } = await prompt("/usage");
    expect(textOf(updates)).toMatch(/^Plan usage: \$\d+\.\d\d/);
    expect(runs()).toBe(before);
  });

  it("sends usage_update after a prompt: the context used against the model's window", async () => {
    const { prompt } = await editor();
    const { updates } = await prompt("count these four words");
    const usage = updates.map((n) => n.update).find((u) => u.sessionUpdate === "usage_update");
    expect(usage).toMatchObject({ sessionUpdate: "usage_update", size: 200_000 });
    const used = usage?.sessionUpdate === "usage_update" ? usage.used : 0;
    expect(used).toBeGreaterThan(0);
  });

  it("/compact continues in a new Cursor conversation that starts from Cursor's summary", async () => {
    const { prompt } = await editor();
    await prompt("Remember the word tangerine");
    const before = await prompt("[[emu:recall]]");
    expect(textOf(before.updates)).toBe("First message: Remember the word tangerine");
    const compacted = await prompt("/compact");
    expect(compacted.response.stopReason).toBe("end_turn");
    expect(textOf(compacted.updates)).toContain("Compacted");
    const after = await prompt("[[emu:recall]]");
    // The emulator echoes the summary request, so its "summary" names it; the new conversation starts from it.
    expect(textOf(after.updates)).toMatch(/^First message: This conversation continues an earlier one\. Summary/);
    expect(textOf(after.updates)).toContain("You said: Summarize our conversation so far");
  });
});
