/**
 * Modes against `cursor-bridge acp` as a process, driven by the SDK's client over stdio on the embedded emulator:
 * a mode switch Cursor's model asks for (`[[emu:switch-mode]]`) goes to the user as a permission request and only
 * the user's allow switches the session (saved, and told with `current_mode_update`); Ask mode refuses writes,
 * deletes and commands, Plan mode writes and deletes, with a typed rejection, without asking the user or touching
 * anything.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ClientConnection,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { type AcpProcess, connectEditor, spawnAcp } from "./agent-process.js";

type Answer = "allow-once" | "reject-once" | "cancelled";

describe("ACP modes over stdio", { timeout: 120_000 }, () => {
  let home: TempHome;
  let cwd: string;
  let agent: AcpProcess;
  let connection: ClientConnection;
  let updates: SessionNotification[];
  /** What the user answers the next permission requests (the last entry repeats). */
  let answers: Answer[] = [];
  const calls: Array<{ method: string; params: unknown }> = [];

  beforeAll(async () => {
    home = createTempHome("acp-modes");
    cwd = join(home.dir, "project");
    mkdirSync(cwd);
    writeFileSync(join(cwd, "notes.txt"), "the notes\n");
    agent = spawnAcp(["--upstream", "emulator", "--log-level", "warn"], {
      cwd: home.dir,
      env: home.env,
      rawStdout: false,
    });
    const connected = connectEditor(agent, "modes-test", (editor) => {
      editor
        .onRequest("session/request_permission", ({ params }) => {
          calls.push({ method: "session/request_permission", params });
          const answer = answers.length > 1 ? (answers.shift() as Answer) : (answers[0] ?? "reject-once");
          return answer === "cancelled"
            ? { outcome: { outcome: "cancelled" } }
            : { outcome: { outcome: "selected", optionId: answer } };
        })
        .onRequest("fs/read_text_file", ({ params }) => {
          calls.push({ method: "fs/read_text_file", params });
          return { content: "the notes\n" };
        })
        .onRequest("fs/write_text_file", ({ params }) => {
          // The editor writes the file (as Zed does), so a refused write is seen to leave the disk alone.
          calls.push({ method: "fs/write_text_file", params });
          writeFileSync(params.path, params.content);
          return {};
        })
        .onRequest("terminal/create", ({ params }) => {
          calls.push({ method: "terminal/create", params });
          return { terminalId: "term-1" };
        })
        .onRequest("terminal/wait_for_exit", () => ({ exitCode: 0 }))
        .onRequest("terminal/output", () => ({ output: "ran\n", truncated: false, exitStatus: { exitCode: 0 } }))
        .onRequest("terminal/release", () => ({}));
    });
    connection = connected.connection;
    updates = connected.updates;
    await connection.agent.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    });
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    home?.remove();
  });

  const newSession = async (mode?: "ask" | "plan") => {
    const session = await connection.agent.request("session/new", { cwd, mcpServers: [] });
    expect(session.modes?.currentModeId).toBe("agent");
    if (mode !== undefined)
      await connection.agent.request("session/set_mode", { sessionId: session.sessionId, modeId: mode });
    calls.length = 0;
    return session.sessionId;
  };

  const prompt = async (sessionId: string, text: string) => {
    const from = updates.length;
    const response = await connection.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    const turn = updates
      .slice(from)
      .filter((n) => n.sessionId === sessionId)
      .map((n) => n.update);
    const reply = turn
      .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
      .join("");
    return { response, turn, reply };
  };

  /** The mode a fresh look at the stored session reports (closed first, so it is read from the store). */
  const storedMode = async (sessionId: string) => {
    await connection.agent.request("session/close", { sessionId });
    const resumed = await connection.agent.request("session/resume", { sessionId, cwd, mcpServers: [] });
    return resumed.modes?.currentModeId;
  };

  const permissions = () =>
    calls.filter((c) => c.method === "session/request_permission").map((c) => c.params as RequestPermissionRequest);

  it("asks the user before a mode switch Cursor asks for; on allow the session switches and the picker follows", async () => {
    const sessionId = await newSession();
    answers = ["allow-once"];
    const { response, turn, reply } = await prompt(
      sessionId,
      "[[emu:switch-mode plan The change needs a plan first.]]",
    );
    expect(response.stopReason).toBe("end_turn");
    const asked = permissions();
    expect(asked).toHaveLength(1);
    expect(asked[0]?.toolCall).toMatchObject({ kind: "switch_mode", title: "Switch from Agent to Plan mode" });
    expect(JSON.stringify(asked[0]?.toolCall.content)).toContain("The change needs a plan first.");
    expect(asked[0]?.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
    expect(turn).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
    const options = turn.find((u) => u.sessionUpdate === "config_option_update");
    expect(JSON.stringify(options)).toContain('"currentValue":"plan"');
    expect(turn).toContainEqual(
      expect.objectContaining({
        sessionUpdate: "tool_call_update",
        status: "completed",
        rawOutput: { fromModeId: "agent", toModeId: "plan" },
      }),
    );
    expect(reply).toContain("Mode switch to plan: approved");
    expect(await storedMode(sessionId)).toBe("plan");
  });

  it.each([
    ["rejects", "reject-once", "rejected"],
    ["cancels", "cancelled", "cancelled"],
  ] as const)("keeps the mode when the user %s the switch, and tells Cursor why", async (_, answer, word) => {
    const sessionId = await newSession();
    answers = [answer];
    const { turn, reply } = await prompt(sessionId, "[[emu:switch-mode ask Only questions here.]]");
    expect(permissions()).toHaveLength(1);
    expect(turn.some((u) => u.sessionUpdate === "current_mode_update")).toBe(false);
    expect(reply).toContain(`Mode switch to ask was rejected: The user ${word} switching from Agent to Ask mode.`);
    expect(turn).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call_update", status: "failed" }));
    expect(await storedMode(sessionId)).toBe("agent");
  });

  it("rejects a switch to a mode the session does not have without asking", async () => {
    const sessionId = await newSession();
    const { reply } = await prompt(sessionId, "[[emu:switch-mode debug Let me debug.]]");
    expect(permissions()).toHaveLength(0);
    expect(reply).toContain(
      'Mode switch to debug was rejected: This session has no mode "debug" (it has agent, plan, ask).',
    );
    expect(await storedMode(sessionId)).toBe("agent");
  });

  it("in Ask mode refuses writes and commands without asking the user or touching anything; reads still run", async () => {
    const sessionId = await newSession("ask");
    const { response, turn, reply } = await prompt(
      sessionId,
      '[[emu:native read {"path":"notes.txt"}]] [[emu:native write {"path":"ask.txt","fileText":"no"}]] ' +
        '[[emu:native shell {"command":"touch ran.txt"}]]',
    );
    expect(response.stopReason).toBe("end_turn");
    expect(calls.map((c) => c.method)).toEqual(["fs/read_text_file"]);
    expect(existsSync(join(cwd, "ask.txt"))).toBe(false);
    const failed = turn.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    expect(failed).toHaveLength(2);
    for (const update of failed) {
      expect(JSON.stringify(update)).toContain("The session is in Ask mode, which answers without changing anything");
    }
    expect(reply).toContain("writing ask.txt was refused without asking the user");
    expect(reply).toContain("running `touch ran.txt` was refused");
    expect(reply).toContain("the notes");
  });

  it("in Plan mode refuses writes without asking, and asks the user before a command", async () => {
    const sessionId = await newSession("plan");
    answers = ["allow-once"];
    const { reply } = await prompt(
      sessionId,
      '[[emu:native write {"path":"plan.txt","fileText":"no"}]] [[emu:native shell {"command":"git log"}]]',
    );
    expect(existsSync(join(cwd, "plan.txt"))).toBe(false);
    expect(reply).toContain("The session is in Plan mode, which plans the change before making it: writing plan.txt");
    expect(permissions().map((p) => p.toolCall.kind)).toEqual(["execute"]);
    expect(calls.map((c) => c.method)).toEqual(["session/request_permission", "terminal/create"]);
  });

  it("in Ask mode, once the user allows Cursor's switch to Agent mode, the turn's write asks and runs", async () => {
    const sessionId = await newSession("ask");
    answers = ["allow-once"];
    const { reply, turn } = await prompt(
      sessionId,
      '[[emu:switch-mode agent The fix needs an edit.]] [[emu:native write {"path":"agent.txt","fileText":"yes\\n"}]]',
    );
    expect(reply).toContain("Mode switch to agent: approved");
    expect(permissions().map((p) => p.toolCall.kind)).toEqual(["switch_mode", "edit"]);
    expect(calls.some((c) => c.method === "fs/write_text_file")).toBe(true);
    expect(existsSync(join(cwd, "agent.txt"))).toBe(true);
    expect(turn).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "agent" });
    expect(await storedMode(sessionId)).toBe("agent");
  });
});
