/**
 * ACP session management in-process, on the real engine and emulator: titles from the first prompt
 * (`session_info_update`), `session/list` (cwd filter, newest first, pages), `session/resume` without replay in a
 * fresh agent, `session/close` stopping the session's MCP server and `session/delete` removing it from the list.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ClientCapabilities, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import { listPage } from "../../src/surfaces/acp/list.js";
import { acpSessionStoreOver } from "../../src/surfaces/acp/session-store.js";
import { useAcpFixture } from "./support.js";

const FULL: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };
const ECHO_SERVER = fileURLToPath(new URL("./fixtures/echo-mcp-server.mjs", import.meta.url));

const acp = useAcpFixture("cursor-bridge-acp-sessions-");

async function editor() {
  const connected = acp.connect();
  const agent = connected.connection.agent;
  const init = await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: FULL });
  return { ...connected, agent, init };
}

function textOf(updates: Array<{ update: { sessionUpdate: string } }>): string {
  return updates
    .map((n) => n.update as { sessionUpdate: string; content?: { type: string; text?: string } })
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
    .map((u) => u.content?.text ?? "")
    .join("");
}

async function processGone(pid: number): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("ACP session management", () => {
  it("advertises list, resume, close and delete", async () => {
    const { init } = await editor();
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {}, delete: {} });
  });

  it("titles a session from its first prompt and lists, resumes, closes and deletes sessions", async () => {
    const cwdA = join(acp.dir, "a");
    const cwdB = join(acp.dir, "b");
    mkdirSync(cwdA);
    mkdirSync(cwdB);
    const first = await editor();
    const make = async (cwd: string, text: string) => {
      const { sessionId } = await first.agent.request("session/new", { cwd, mcpServers: [] });
      first.script.updates.length = 0;
      await first.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      return sessionId;
    };
    const one = await make(cwdA, "Remember the word tangerine");
    const info = first.script.updates.map((n) => n.update).find((u) => u.sessionUpdate === "session_info_update");
    expect(info).toMatchObject({ title: "Remember the word tangerine", updatedAt: expect.any(String) });
    const two = await make(cwdB, "Something else\nwith a second line");
    const three = await make(cwdA, "Third session");
    // Later prompts keep the first title.
    await first.agent.request("session/prompt", { sessionId: one, prompt: [{ type: "text", text: "again" }] });

    const listed = await first.agent.request("session/list", { cwd: cwdA });
    expect(listed.sessions.map((s) => [s.sessionId, s.title, s.cwd])).toEqual([
      [one, "Remember the word tangerine", cwdA],
      [three, "Third session", cwdA],
    ]);
    expect(Date.parse(listed.sessions[0]?.updatedAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(listed.sessions[1]?.updatedAt ?? ""),
    );
    const all = await first.agent.request("session/list", {});
    expect(all.sessions.map((s) => s.sessionId)).toEqual(expect.arrayContaining([one, two, three]));
    expect(all.sessions.find((s) => s.sessionId === two)?.title).toBe("Something else");
    await expect(first.agent.request("session/list", { cwd: "relative" })).rejects.toMatchObject({ code: -32602 });
    await expect(first.agent.request("session/list", { cursor: "not-a-cursor" })).rejects.toMatchObject({
      code: -32602,
    });

    // A new agent process resumes without replaying and continues the same Cursor conversation.
    const second = await editor();
    const pidFile = join(acp.dir, "echo.pid");
    const resumed = await second.agent.request("session/resume", {
      sessionId: one,
      cwd: cwdA,
      mcpServers: [
        {
          name: "echo",
          command: process.execPath,
          args: [ECHO_SERVER],
          env: [{ name: "ECHO_MCP_PID", value: pidFile }],
        },
      ],
    });
    expect(resumed.configOptions?.map((o) => o.id)).toEqual(["mode", "model"]);
    expect(second.script.updates).toEqual([]);
    const answer = await second.agent.request("session/prompt", {
      sessionId: one,
      prompt: [{ type: "text", text: "[[emu:recall]]" }],
    });
    expect(answer.stopReason).toBe("end_turn");
    expect(textOf(second.script.updates)).toBe("First message: Remember the word tangerine");

    // Close stops the MCP server and forgets the live session; the stored one stays listed.
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await second.agent.request("session/close", { sessionId: one });
    expect(await processGone(pid)).toBe(true);
    await expect(
      second.agent.request("session/prompt", { sessionId: one, prompt: [{ type: "text", text: "hi" }] }),
    ).rejects.toMatchObject({ code: -32002 });
    // The agent answers -32002; the SDK's client treats that as done for close and delete, as ACP recommends.
    await expect(second.agent.request("session/close", { sessionId: one })).resolves.toEqual({});
    expect((await second.agent.request("session/list", { cwd: cwdA })).sessions.map((s) => s.sessionId)).toContain(one);

    await second.agent.request("session/delete", { sessionId: three });
    expect((await second.agent.request("session/list", { cwd: cwdA })).sessions.map((s) => s.sessionId)).toEqual([one]);
    await expect(second.agent.request("session/delete", { sessionId: three })).resolves.toEqual({});
    await expect(
      second.agent.request("session/resume", { sessionId: three, cwd: cwdA, mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32002 });
  });
});

describe("unstable session/fork and session/set_title", () => {
  it("forks a session that continues from the source's checkpoint, and retitles a session", async () => {
    const cwd = join(acp.dir, "fork");
    mkdirSync(cwd);
    const { agent, script } = await editor();
    const { sessionId } = await agent.request("session/new", { cwd, mcpServers: [] });
    await agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "The source remembers plums" }],
    });
    // Methods of ACP's unstable schema, sent as the SDK sends any method.
    const request = agent.request.bind(agent) as unknown as (m: string, p: unknown) => Promise<Record<string, unknown>>;
    const fork = await request("session/fork", { sessionId, cwd, mcpServers: [] });
    const forkId = fork.sessionId as string;
    expect(forkId).not.toBe(sessionId);
    script.updates.length = 0;
    await agent.request("session/prompt", { sessionId: forkId, prompt: [{ type: "text", text: "[[emu:recall]]" }] });
    expect(textOf(script.updates)).toBe("First message: The source remembers plums");
    await request("session/set_title", { sessionId: forkId, title: "Plums, continued" });
    expect(script.updates.map((n) => n.update)).toContainEqual(
      expect.objectContaining({ sessionUpdate: "session_info_update", title: "Plums, continued" }),
    );
    const listed = await agent.request("session/list", { cwd });
    expect(listed.sessions.map((s) => [s.sessionId, s.title])).toEqual([
      [forkId, "Plums, continued"],
      [sessionId, "The source remembers plums"],
    ]);
    await expect(request("session/fork", { sessionId: "gone", cwd })).rejects.toMatchObject({ code: -32002 });
    await expect(request("session/fork", { sessionId, cwd: "relative" })).rejects.toMatchObject({ code: -32602 });
  });
});

describe("session/list pages", () => {
  it("pages newest first without repeats and drops index entries whose session is gone", async () => {
    const responses = createMemoryResponseStore();
    const store = acpSessionStoreOver(responses);
    const base = Date.now();
    for (let i = 0; i < 7; i++) {
      await store.put({
        id: `s${i}`,
        cwd: i % 2 === 0 ? "/even" : "/odd",
        mode: "agent",
        model: "default",
        config: {},
        title: `session ${i}`,
        messages: [],
        transcript: [],
        updatedAt: base + (i === 6 ? 3 : i),
      });
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listPage(store, { cwd: undefined, cursor }, 3);
      expect(page.sessions.length).toBeLessThanOrEqual(3);
      seen.push(...page.sessions.map((s) => s.sessionId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(["s5", "s4", "s3", "s6", "s2", "s1", "s0"]);
    const even = await listPage(store, { cwd: "/even", cursor: undefined }, 10);
    expect(even.sessions.map((s) => s.sessionId)).toEqual(["s4", "s6", "s2", "s0"]);
    expect(even.nextCursor).toBeUndefined();
    // A session the store no longer has (expired, evicted) leaves the index when a page meets it.
    await responses.delete("acp-session:s4");
    expect((await listPage(store, { cwd: "/even", cursor: undefined }, 10)).sessions.map((s) => s.sessionId)).toEqual([
      "s6",
      "s2",
      "s0",
    ]);
    expect((await store.list()).map((s) => s.id)).not.toContain("s4");
  });
});
