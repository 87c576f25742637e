/**
 * `authenticate` on the real `cursor-bridge acp` process: the API-key flow of `cursor-bridge login --api-key`
 * (the key from CURSOR_API_KEY) against the emulator stores the login (its output on stderr, stdout stays protocol),
 * after which the stored-login method succeeds and a session runs; an unknown method is refused.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";

const BIN = fileURLToPath(new URL("../../bin/cursor-bridge.js", import.meta.url));

interface Reply {
  id: number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

describe("authenticate", { timeout: 60_000 }, () => {
  let emulator: Emulator;
  let home: TempHome;
  let child: ChildProcess;
  const lines: string[] = [];
  let stderr = "";

  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, apiKeys: ["acp-test-key"] });
    home = createTempHome("acp-auth");
    const env = {
      ...home.env,
      CURSOR_BRIDGE_CONFIG_DIR: join(home.dir, "cb-config"),
      CURSOR_API_KEY: "acp-test-key",
    };
    child = spawn(
      process.execPath,
      [BIN, "acp", "--upstream", "cursor", "--cursor-api-url", emulator.url, "--model", "composer-1"],
      {
        cwd: home.dir,
        env,
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let buffer = "";
    child.stdout?.setEncoding("utf8").on("data", (part: string) => {
      buffer += part;
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts.filter((line) => line !== ""));
    });
    child.stderr?.setEncoding("utf8").on("data", (part: string) => (stderr += part));
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
    await emulator.close();
    home.remove();
  });

  const call = async (id: number, method: string, params: unknown): Promise<Reply> => {
    child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    const deadline = Date.now() + 40_000;
    for (;;) {
      const reply = lines.map((line) => JSON.parse(line) as Reply).find((r) => r.id === id);
      if (reply !== undefined) return reply;
      if (Date.now() > deadline) throw new Error(`no reply to ${method}; stderr:\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("logs in with the API key flow, then the stored login works", async () => {
    const init = await call(1, "initialize", { protocolVersion: 1 });
    const methods = (init.result?.authMethods ?? []) as Array<{ id: string }>;
    expect(methods.map((m) => m.id)).toEqual(["cursor-login", "cursor-browser", "cursor-api-key"]);
    const unknown = await call(3, "authenticate", { methodId: "nope" });
    expect(unknown.error?.code).toBe(-32602);
    const login = await call(4, "authenticate", { methodId: "cursor-api-key" });
    expect(login.error, stderr).toBeUndefined();
    expect(existsSync(join(home.dir, "cb-config", "credentials.json"))).toBe(true);
    expect(stderr).toContain("Logged in as");
    const stored = await call(5, "authenticate", { methodId: "cursor-login" });
    expect(stored.error).toBeUndefined();
    const session = await call(6, "session/new", { cwd: home.dir, mcpServers: [] });
    expect(session.error, stderr).toBeUndefined();
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
