/**
 * `cursor-bridge acp` as a process on stdio: malformed JSON-RPC gets well-formed errors and the process keeps
 * serving; stdout carries nothing but protocol messages (logs go to stderr).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempHome, type TempHome } from "../e2e/support/served-bridge.js";
import { type AcpProcess, type RpcLine, spawnAcp } from "./agent-process.js";

describe("cursor-bridge acp on stdio", { timeout: 60_000 }, () => {
  let home: TempHome;
  let agent: AcpProcess;

  beforeAll(() => {
    home = createTempHome("acp-stdio");
    agent = spawnAcp(["--upstream", "emulator", "--log-level", "debug"], { cwd: home.dir, env: home.env });
  });

  afterAll(async () => {
    await agent.stop(5000);
    home.remove();
  });

  const reply = (id: number | null, count: number) => agent.reply(id, count);
  const send = (text: string) => agent.send(text);

  it("answers malformed input with JSON-RPC errors and keeps serving", async () => {
    send("this is not json");
    const parse = await reply(null, 1);
    expect(parse).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
    send('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"one"}}');
    expect(await reply(2, 1)).toMatchObject({ jsonrpc: "2.0", error: { code: -32602 } });
    send('{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1}}');
    const init = (await reply(3, 1)) as RpcLine & { result?: { agentCapabilities?: { sessionCapabilities?: object } } };
    expect(init.result?.protocolVersion).toBe(1);
    // Exactly what the agent implements, the unstable fork and title included.
    expect(init.result?.agentCapabilities?.sessionCapabilities).toEqual({
      list: {},
      resume: {},
      close: {},
      delete: {},
      fork: {},
      title: {},
    });
    send('{"jsonrpc":"2.0","id":4,"method":"no/such/method","params":{}}');
    expect(await reply(4, 1)).toMatchObject({ jsonrpc: "2.0", error: { code: -32601 } });
    send('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}');
    expect(await reply(5, 1)).toMatchObject({ error: { code: -32602, message: expect.stringContaining("absolute") } });
    send('{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"gone","prompt":[]}}');
    expect(await reply(6, 1)).toMatchObject({ error: { code: -32002 } });
    send('{"jsonrpc":"2.0","id":7}');
    send('{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":1}}');
    expect((await reply(8, 1)).result?.protocolVersion).toBe(1);
    for (const line of agent.lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(agent.child.exitCode).toBeNull();
  });

  it("answers a line over the 32 MiB limit with an error for its id, and a too-large prompt with the limit", async () => {
    const padding = "x".repeat(33 * 1024 * 1024);
    send(`{"jsonrpc":"2.0","id":20,"method":"session/prompt","params":{"sessionId":"s","pad":"${padding}"}}`);
    const tooLong = await reply(20, 1);
    expect(tooLong).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    expect(tooLong.error?.message).toContain("32 MiB");
    expect(agent.stderr()).toContain("dropped a JSON-RPC message over the line limit");
    send('{"jsonrpc":"2.0","id":21,"method":"initialize","params":{"protocolVersion":1}}');
    expect((await reply(21, 1)).result?.protocolVersion).toBe(1);

    send(
      `{"jsonrpc":"2.0","id":22,"method":"session/new","params":{"cwd":${JSON.stringify(home.dir)},"mcpServers":[]}}`,
    );
    const created = (await reply(22, 1)) as RpcLine & { result?: { sessionId?: string } };
    const sessionId = created.result?.sessionId;
    expect(sessionId).toEqual(expect.any(String));
    const text = "y".repeat(16 * 1024 * 1024);
    send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 23,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text }] },
      }),
    );
    const big = await reply(23, 1);
    expect(big).toMatchObject({ error: { code: -32602 } });
    expect(big.error?.message).toContain(`the limit is ${15 * 1024 * 1024} bytes`);
    expect(agent.child.exitCode).toBeNull();
  });
});
