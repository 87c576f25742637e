/**
 * Session management against `cursor-bridge acp` as a process, driven by the SDK's client over stdio, on the file
 * store and on Redis: three sessions in two folders, `session/list` by folder (titles, newest first), a restarted
 * agent resuming one and continuing the same Cursor conversation (`[[emu:recall]]`), `session/close` stopping its
 * MCP server, `session/fork` continuing from the source's checkpoint and `session/delete` removing one from the list.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ClientConnection, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingBinaries, type RedisServer, startRedisServer } from "../cluster/support/redis-server.js";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { connectEditor, spawnAcp } from "./agent-process.js";

const ECHO_SERVER = fileURLToPath(new URL("./fixtures/echo-mcp-server.mjs", import.meta.url));

interface Agent {
  connection: ClientConnection;
  updates: SessionNotification[];
  stop(): Promise<void>;
}

function startAgent(home: TempHome, extra: string[]): Agent {
  const agent = spawnAcp(["--upstream", "emulator", "--log-level", "warn", ...extra], {
    cwd: home.dir,
    env: home.env,
    rawStdout: false,
    stderr: "inherit",
  });
  return { ...connectEditor(agent, "stdio-test"), stop: () => agent.stop() };
}

function textOf(updates: SessionNotification[], sessionId: string): string {
  return updates
    .filter((n) => n.sessionId === sessionId)
    .map((n) => n.update)
    .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
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

const noRedis = missingBinaries("redis-server", "redis-cli");

describe.each([
  { store: "file", skip: undefined },
  { store: "redis", skip: noRedis },
])("ACP sessions over stdio on the $store store", ({ store, skip }) => {
  let home: TempHome;
  let redis: RedisServer | undefined;
  const agents: Agent[] = [];

  beforeAll(async () => {
    if (skip !== undefined) return;
    home = createTempHome(`acp-sessions-${store}`);
    if (store === "redis") redis = await startRedisServer();
  }, 60_000);

  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    await redis?.close();
    home?.remove();
  });

  const agent = async () => {
    const started = startAgent(
      home,
      redis === undefined
        ? []
        : ["--store", redis.url, "--cluster-secret", "acp-sessions-test-secret-0123456789abcdef"],
    );
    agents.push(started);
    const init = await started.connection.agent.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {}, delete: {} });
    return started;
  };

  it.skipIf(skip !== undefined)(
    "lists, resumes after a restart, closes and deletes",
    { timeout: 120_000 },
    async () => {
      const cwdA = join(home.dir, "a");
      const cwdB = join(home.dir, "b");
      mkdirSync(cwdA);
      mkdirSync(cwdB);
      const first = await agent();
      const make = async (cwd: string, text: string) => {
        const { sessionId } = await first.connection.agent.request("session/new", { cwd, mcpServers: [] });
        await first.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
        return sessionId;
      };
      const one = await make(cwdA, "Remember the word tangerine");
      const two = await make(cwdB, "A session elsewhere");
      const three = await make(cwdA, "The newest one here");
      const listed = await first.connection.agent.request("session/list", { cwd: cwdA });
      expect(listed.sessions.map((s) => [s.sessionId, s.title])).toEqual([
        [three, "The newest one here"],
        [one, "Remember the word tangerine"],
      ]);
      expect(
        (await first.connection.agent.request("session/list", { cwd: cwdB })).sessions.map((s) => s.sessionId),
      ).toEqual([two]);
      await first.stop();

      const second = await agent();
      const pidFile = join(home.dir, "echo.pid");
      await second.connection.agent.request("session/resume", {
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
      await second.connection.agent.request("session/prompt", {
        sessionId: one,
        prompt: [{ type: "text", text: "[[emu:recall]]" }],
      });
      expect(textOf(second.updates, one)).toContain("First message: Remember the word tangerine");
      expect(existsSync(pidFile)).toBe(true);
      const pid = Number(readFileSync(pidFile, "utf8"));
      await second.connection.agent.request("session/close", { sessionId: one });
      expect(await processGone(pid)).toBe(true);
      // ACP's unstable session/fork: a new session continuing from the source's last checkpoint.
      const request = second.connection.agent.request.bind(second.connection.agent) as unknown as (
        method: string,
        params: unknown,
      ) => Promise<{ sessionId: string }>;
      const fork = await request("session/fork", { sessionId: two, cwd: cwdB, mcpServers: [] });
      await second.connection.agent.request("session/prompt", {
        sessionId: fork.sessionId,
        prompt: [{ type: "text", text: "[[emu:recall]]" }],
      });
      expect(textOf(second.updates, fork.sessionId)).toContain("First message: A session elsewhere");
      await second.connection.agent.request("session/delete", { sessionId: three });
      expect(
        (await second.connection.agent.request("session/list", { cwd: cwdA })).sessions.map((s) => s.sessionId),
      ).toEqual([one]);
    },
  );
});
