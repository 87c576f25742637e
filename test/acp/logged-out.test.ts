/**
 * `cursor-bridge acp` without a Cursor login, the way an editor starts it (no `--upstream`): session/new and
 * session/load answer ACP's auth-required error (-32000) naming the login methods, so the editor offers its login
 * (Zed shows them only after that error) instead of the emulator's scripted replies passing for Cursor's. The
 * emulator runs only when asked for (CURSOR_BRIDGE_UPSTREAM=emulator here; `--upstream emulator` in the other tests).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { type AcpProcess, type RpcLine, spawnAcp } from "./agent-process.js";

const METHODS = ["cursor-login", "cursor-browser", "cursor-api-key"];

/** The agent's message text in the lines stdout carried. */
function agentText(lines: readonly string[]): string {
  return lines
    .map(
      (line) => JSON.parse(line) as { params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } },
    )
    .filter((message) => message.params?.update?.sessionUpdate === "agent_message_chunk")
    .map((message) => message.params?.update?.content?.text ?? "")
    .join("");
}

describe("acp without a login", { timeout: 60_000 }, () => {
  let home: TempHome;
  const agents: AcpProcess[] = [];

  beforeAll(() => {
    home = createTempHome("acp-logged-out");
  });

  afterAll(async () => {
    for (const agent of agents) await agent.stop(5000);
    home.remove();
  });

  const start = (env: NodeJS.ProcessEnv = {}) => {
    const agent = spawnAcp(["--log-level", "warn"], { cwd: home.dir, env: { ...home.env, ...env } });
    agents.push(agent);
    let next = 0;
    const call = async (method: string, params: unknown): Promise<RpcLine> => {
      const id = ++next;
      agent.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      return agent.reply(id, 1, 40_000);
    };
    return { agent, call };
  };

  it("answers session/new and session/load with auth-required and the login methods, never the emulator", async () => {
    const { agent, call } = start();
    const init = await call("initialize", { protocolVersion: 1 });
    expect(((init.result?.authMethods ?? []) as Array<{ id: string }>).map((m) => m.id)).toEqual(METHODS);
    const created = await call("session/new", { cwd: home.dir, mcpServers: [] });
    expect(created.result, agent.stderr()).toBeUndefined();
    expect(created.error).toMatchObject({
      code: -32000,
      message: expect.stringContaining("Not logged in to Cursor"),
      data: { code: "unauthenticated", authMethods: METHODS },
    });
    expect(created.error?.message).toContain("--upstream emulator");
    const loaded = await call("session/load", { sessionId: "some-session", cwd: home.dir, mcpServers: [] });
    expect(loaded.error).toMatchObject({ code: -32000, data: { authMethods: METHODS } });
    // The stored-login method says there is none; the agent keeps answering.
    const stored = await call("authenticate", { methodId: "cursor-login" });
    expect(stored.error?.code).toBe(-32000);
    expect(agent.stderr()).not.toContain("CURSOR EMULATOR");
    expect(agentText(agent.lines)).toBe("");
  });

  it("runs on the emulator when asked for it explicitly", async () => {
    const { agent, call } = start({ CURSOR_BRIDGE_UPSTREAM: "emulator" });
    await call("initialize", { protocolVersion: 1 });
    const created = await call("session/new", { cwd: home.dir, mcpServers: [] });
    expect(created.error, agent.stderr()).toBeUndefined();
    const sessionId = created.result?.sessionId as string;
    const prompt = await call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello there" }] });
    expect(prompt.result?.stopReason, agent.stderr()).toBe("end_turn");
    expect(agentText(agent.lines)).toBe("You said: hello there");
    expect(agent.stderr()).toContain("CURSOR EMULATOR");
  });
});
