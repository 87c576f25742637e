/**
 * The editor's side of an exec going wrong, in-process on the real engine and emulator: a malformed answer to
 * fs/read_text_file, fs/write_text_file, session/request_permission or a terminal method is a tool error Cursor is
 * answered at once (never a turn left to the stall watchdog), and a cancel while a permission request is open closes
 * the tool call before the prompt's response, whether the editor answers the request late or never.
 */
import { join } from "node:path";
import { type ClientCapabilities, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { useAcpFixture } from "./support.js";

const FULL: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

const acp = useAcpFixture("cursor-bridge-acp-answers-");

async function editor(options: { settleTimeoutMs?: number } = {}) {
  const connected = acp.connect(options);
  const agent = connected.connection.agent;
  await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: FULL });
  const session = await agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
  const prompt = (text: string) =>
    agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
  return { ...connected, agent, session, prompt };
}

function textOf(updates: SessionNotification[]): string {
  return updates
    .map((n) => n.update)
    .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
    .join("");
}

function toolUpdates(updates: SessionNotification[]) {
  return updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
}

/** The text content of the call's final update. */
function finalText(update: ReturnType<typeof toolUpdates>[number] | undefined): string {
  const content = update?.content ?? [];
  return content.map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");
}

describe("a malformed answer from the editor", () => {
  const cases: Array<{ name: string; method: string; answer: unknown; directive: string; says: string }> = [
    {
      name: "fs/read_text_file without content",
      method: "fs/read_text_file",
      answer: {},
      directive: '[[emu:native read {"path":"a.txt"}]]',
      says: "fs/read_text_file was malformed (content is not a string)",
    },
    {
      name: "fs/read_text_file with a numeric content",
      method: "fs/read_text_file",
      answer: { content: 5 },
      directive: '[[emu:native read {"path":"a.txt"}]]',
      says: "fs/read_text_file was malformed (content is not a string)",
    },
    {
      name: "fs/write_text_file answered with a string",
      method: "fs/write_text_file",
      answer: "done",
      directive: '[[emu:native write {"path":"new.txt","fileText":"x"}]]',
      says: "fs/write_text_file was malformed (not an object)",
    },
    {
      name: "session/request_permission with a bare outcome",
      method: "session/request_permission",
      answer: { outcome: "yes" },
      directive: '[[emu:native shell {"command":"echo hi"}]]',
      says: "session/request_permission was malformed",
    },
    {
      name: "terminal/create with a numeric id",
      method: "terminal/create",
      answer: { terminalId: 5 },
      directive: '[[emu:native shell {"command":"echo hi"}]]',
      says: "terminal/create was malformed (terminalId is not a string)",
    },
    {
      name: "terminal/create without an id",
      method: "terminal/create",
      answer: {},
      directive: '[[emu:native shell {"command":"echo hi"}]]',
      says: "terminal/create was malformed (terminalId is not a string)",
    },
    {
      name: "terminal/wait_for_exit with a text exit code",
      method: "terminal/wait_for_exit",
      answer: { exitCode: "0" },
      directive: '[[emu:native shell {"command":"echo hi"}]]',
      says: "terminal/wait_for_exit was malformed (exitCode is not an integer or null)",
    },
    {
      name: "terminal/output without output",
      method: "terminal/output",
      answer: { truncated: false },
      directive: '[[emu:native shell {"command":"echo hi"}]]',
      says: "terminal/output was malformed (output is not a string)",
    },
  ];

  for (const c of cases) {
    it(`${c.name}: the tool fails saying so, Cursor is answered and the turn ends`, async () => {
      const { prompt, script } = await editor();
      script.files.set(join(acp.dir, "a.txt"), "text\n");
      script.answers.set(c.method, () => c.answer);
      const response = await prompt(c.directive);
      expect(response.stopReason).toBe("end_turn");
      const text = textOf(script.updates);
      expect(text).toContain(c.says);
      expect(text).not.toMatch(/Cannot read properties|undefined/);
      const last = toolUpdates(script.updates).at(-1);
      expect(last).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
      expect(finalText(last)).toContain(c.says);
      // The session goes on.
      script.answers.clear();
      script.updates.length = 0;
      expect((await prompt("still there?")).stopReason).toBe("end_turn");
    });
  }
});

describe("a cancel while the editor asks its user", () => {
  it("closes the tool call before the response when the editor answers the request cancelled after session/cancel", async () => {
    const { prompt, script, connection, session } = await editor();
    let answer: (value: unknown) => void = () => undefined;
    script.answers.set("session/request_permission", () => new Promise((resolve) => (answer = resolve)));
    const running = prompt('[[emu:native shell {"command":"echo x"}]]');
    await waitFor(() => script.calls.some((c) => c.method === "session/request_permission"));
    await connection.agent.notify("session/cancel", { sessionId: session.sessionId });
    setTimeout(() => answer({ outcome: { outcome: "cancelled" } }), 50);
    const response = await running;
    const atResponse = toolUpdates(script.updates);
    expect(response.stopReason).toBe("cancelled");
    expect(atResponse.at(-1)).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
    expect(finalText(atResponse.at(-1))).toContain("cancelled");
    // Nothing about the call comes after the response.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(toolUpdates(script.updates)).toHaveLength(atResponse.length);
    expect(script.calls.some((c) => c.method === "terminal/create")).toBe(false);
  });

  it("closes it as failed when the editor never answers, in the stored transcript too", async () => {
    const { prompt, script, connection, session } = await editor({ settleTimeoutMs: 1000 });
    script.answers.set("session/request_permission", () => new Promise(() => undefined));
    const running = prompt('[[emu:native shell {"command":"echo x"}]]');
    await waitFor(() => script.calls.some((c) => c.method === "session/request_permission"));
    await connection.agent.notify("session/cancel", { sessionId: session.sessionId });
    const response = await running;
    expect(response.stopReason).toBe("cancelled");
    const last = toolUpdates(script.updates).at(-1);
    expect(last).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
    expect(finalText(last)).toContain("the editor had not answered");

    // A new agent's replay ends the call the same way (not `pending` forever).
    const other = await loadedElsewhere(session.sessionId);
    expect(toolUpdates(other.script.updates).at(-1)).toMatchObject({ status: "failed" });
  });
});

/** A second agent that loaded the session (its replay in `script.updates`), as another editor window would. */
async function loadedElsewhere(sessionId: string): Promise<ReturnType<typeof acp.connect>> {
  const other = acp.connect();
  await other.connection.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: FULL });
  await other.connection.agent.request("session/load", { sessionId, cwd: acp.dir, mcpServers: [] });
  return other;
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition did not come true in 30 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a command's output after session/load", () => {
  it("is replayed as text: the live update leaves it in the editor's terminal, which is released", async () => {
    const { prompt, script, session } = await editor();
    script.terminal = { output: "built 3 targets\n", exitCode: 0 };
    expect((await prompt('[[emu:native shell {"command":"make"}]]')).stopReason).toBe("end_turn");
    const live = toolUpdates(script.updates).at(-1);
    expect(live).toMatchObject({ status: "completed" });
    expect(live?.content).toBeUndefined();

    const other = await loadedElsewhere(session.sessionId);
    const replayed = toolUpdates(other.script.updates).at(-1);
    expect(replayed).toMatchObject({ status: "completed" });
    expect(finalText(replayed)).toBe("built 3 targets\n");
  });
});

describe("a failed prompt in the replay", () => {
  it("is not replayed when nothing of it reached the conversation; the next prompt is", async () => {
    const { prompt, session } = await editor();
    await expect(prompt("[[emu:error usage_limit]] lost words")).rejects.toMatchObject({ code: -32011 });
    expect((await prompt("kept words")).stopReason).toBe("end_turn");
    const other = await loadedElsewhere(session.sessionId);
    const said = other.script.updates
      .map((n) => n.update)
      .flatMap((u) => (u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? [u.content.text] : []));
    expect(said).toEqual(["kept words"]);
  });

  it("keeps a failed prompt whose turn already ran a tool (a file write), so the replayed write has its prompt", async () => {
    const { prompt, session } = await editor();
    const directive = '[[emu:native write {"path":"written.txt","fileText":"x"}]] [[emu:drop 1]]';
    // The write runs, then the connection drops before any text: the prompt fails with nothing appended to messages.
    await expect(prompt(`${directive} write then fail`)).rejects.toBeDefined();
    const other = await loadedElsewhere(session.sessionId);
    const replayed = other.script.updates.map((n) => n.update);
    const firstTool = replayed.findIndex((u) => u.sessionUpdate === "tool_call");
    const firstUser = replayed.findIndex((u) => u.sessionUpdate === "user_message_chunk");
    expect(firstTool).toBeGreaterThanOrEqual(0);
    expect(firstUser).toBeGreaterThanOrEqual(0);
    expect(firstUser).toBeLessThan(firstTool);
    const said = replayed.flatMap((u) =>
      u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    expect(said).toEqual([`${directive} write then fail`]);
  });
});
