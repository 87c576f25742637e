/**
 * `authenticate` on the real `cursor-bridge acp` process: the API-key flow of `cursor-bridge login --api-key`
 * (the key from CURSOR_API_KEY) against the emulator stores the login (its output on stderr, stdout stays protocol),
 * after which the stored-login method succeeds and a session runs; an unknown method is refused. Without
 * CURSOR_API_KEY the API-key method says how to give the key from an editor (no prompt, no stdin).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { type AcpProcess, type RpcLine, spawnAcp } from "./agent-process.js";

describe("authenticate", { timeout: 60_000 }, () => {
  let emulator: Emulator;
  let home: TempHome;
  let agent: AcpProcess;

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKeys: ["acp-test-key"] });
    home = createTempHome("acp-auth");
    const env = {
      ...home.env,
      CURSOR_BRIDGE_CONFIG_DIR: join(home.dir, "cb-config"),
      CURSOR_API_KEY: "acp-test-key",
    };
    agent = spawnAcp(["--upstream", "cursor", "--cursor-api-url", emulator.url, "--model", "composer-1"], {
      cwd: home.dir,
      env,
    });
  });

  afterAll(async () => {
    await agent.stop(5000);
    await emulator.close();
    home.remove();
  });

  const call = async (id: number, method: string, params: unknown): Promise<RpcLine> => {
    agent.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return agent.reply(id, 1, 40_000);
  };

  it("logs in with the API key flow, then the stored login works", async () => {
    const init = await call(1, "initialize", { protocolVersion: 1 });
    const methods = (init.result?.authMethods ?? []) as Array<{ id: string }>;
    expect(methods.map((m) => m.id)).toEqual(["cursor-login", "cursor-browser", "cursor-api-key"]);
    const unknown = await call(3, "authenticate", { methodId: "nope" });
    expect(unknown.error?.code).toBe(-32602);
    const login = await call(4, "authenticate", { methodId: "cursor-api-key" });
    expect(login.error, agent.stderr()).toBeUndefined();
    expect(existsSync(join(home.dir, "cb-config", "credentials.json"))).toBe(true);
    expect(agent.stderr()).toContain("Logged in as");
    const stored = await call(5, "authenticate", { methodId: "cursor-login" });
    expect(stored.error).toBeUndefined();
    const session = await call(6, "session/new", { cwd: home.dir, mcpServers: [] });
    expect(session.error, agent.stderr()).toBeUndefined();
    for (const line of agent.lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});

describe("authenticate cursor-api-key without CURSOR_API_KEY", { timeout: 60_000 }, () => {
  it("says where an editor's agent gets the key, not to type it at a prompt or pipe it on stdin", async () => {
    const home = createTempHome("acp-auth-nokey");
    const env: NodeJS.ProcessEnv = { ...home.env, CURSOR_BRIDGE_CONFIG_DIR: join(home.dir, "cb-config") };
    delete env.CURSOR_API_KEY;
    const agent = spawnAcp(["--upstream", "cursor", "--model", "composer-1"], { cwd: home.dir, env });
    try {
      agent.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }));
      await agent.reply(1, 1, 40_000);
      const request = { jsonrpc: "2.0", id: 2, method: "authenticate", params: { methodId: "cursor-api-key" } };
      agent.send(JSON.stringify(request));
      const answer = await agent.reply(2, 1, 40_000);
      expect(answer.error?.message).toContain("set CURSOR_API_KEY in the agent's environment");
      expect(answer.error?.message).not.toMatch(/prompt|stdin/);
    } finally {
      await agent.stop(5000);
      home.remove();
    }
  });
});
