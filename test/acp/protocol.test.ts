/**
 * The ACP agent against the SDK's client side, in-process, on the real engine and emulator: every update type the
 * agent sends (message and thought chunks, tool calls with kind, locations, diff and terminal content, mode
 * updates, the replay of session/load) and the error paths (unknown session, mode, model, auth method, audio,
 * a missing editor capability, a refused permission, paths outside cwd).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type McpServer as AcpMcpServer,
  type ClientCapabilities,
  PROTOCOL_VERSION,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { pngImage } from "../support/images.js";
import { type AcpUpstream, type Connected, connectEditor, startUpstream } from "./support.js";

const ECHO_SERVER = fileURLToPath(new URL("./fixtures/echo-mcp-server.mjs", import.meta.url));
const FULL: ClientCapabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

let upstream: AcpUpstream;
let cwd: string;
const open: Connected[] = [];

beforeAll(async () => {
  upstream = await startUpstream();
  cwd = mkdtempSync(join(tmpdir(), "cursor-bridge-acp-"));
  mkdirSync(join(cwd, "src"));
  writeFileSync(join(cwd, "src", "answer.ts"), "export const answer = 42;\n");
});

afterEach(async () => {
  for (const c of open.splice(0)) {
    await c.closeAgent();
    c.connection.close();
  }
});

afterAll(async () => {
  await upstream.close();
  rmSync(cwd, { recursive: true, force: true });
});

async function editor(capabilities: ClientCapabilities = FULL, mcpServers: AcpMcpServer[] = []) {
  const connected = connectEditor(upstream);
  open.push(connected);
  const agent = connected.connection.agent;
  const init = await agent.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: capabilities,
  });
  const session = await agent.request("session/new", { cwd, mcpServers });
  const prompt = async (text: string) => {
    connected.script.updates.length = 0;
    const response = await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    });
    return { response, updates: [...connected.script.updates] };
  };
  return { ...connected, agent, init, session, prompt };
}

function textOf(updates: SessionNotification[], kind = "agent_message_chunk"): string {
  return updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => ("content" in u && !Array.isArray(u.content) && u.content?.type === "text" ? u.content.text : ""))
    .join("");
}

function toolUpdates(updates: SessionNotification[]) {
  return updates
    .map((n) => n.update)
    .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
}

describe("initialize and sessions", () => {
  it("announces the protocol version, capabilities and auth methods", async () => {
    const { init, session } = await editor();
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true, embeddedContext: true },
      mcpCapabilities: { http: true },
    });
    expect(init.authMethods?.map((m) => m.id)).toEqual(["cursor-login"]);
    expect(session.modes?.availableModes.map((m) => m.id)).toEqual(["agent", "plan", "ask"]);
    const models = session.configOptions?.find((o) => o.id === "model");
    expect(models && "options" in models ? models.options.map((o) => ("value" in o ? o.value : "")) : []).toContain(
      "composer-1",
    );
  });

  it("authenticates with a known method and refuses an unknown one", async () => {
    const { agent } = await editor();
    await expect(agent.request("authenticate", { methodId: "cursor-login" })).resolves.toBeDefined();
    await expect(agent.request("authenticate", { methodId: "nope" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("cursor-login"),
    });
  });

  it("answers an unknown session with resource-not-found", async () => {
    const { agent } = await editor();
    await expect(
      agent.request("session/prompt", { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it("answers session/load of an unknown session with resource-not-found", async () => {
    const { agent } = await editor();
    await expect(agent.request("session/load", { sessionId: "never-was", cwd, mcpServers: [] })).rejects.toMatchObject({
      code: -32002,
    });
  });

  it("switches modes with current_mode_update and refuses an unknown mode", async () => {
    const { agent, session, script } = await editor();
    await agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "plan" });
    expect(script.updates.map((n) => n.update)).toContainEqual({
      sessionUpdate: "current_mode_update",
      currentModeId: "plan",
    });
    await expect(
      agent.request("session/set_mode", { sessionId: session.sessionId, modeId: "yolo" }),
    ).rejects.toMatchObject({
      code: -32602,
    });
  });

  it("picks a model Cursor lists and refuses one it does not", async () => {
    const { agent, session } = await editor();
    const set = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "gpt-5.2",
    });
    expect(set.configOptions.find((o) => o.id === "model")).toMatchObject({ currentValue: "gpt-5.2" });
    await expect(
      agent.request("session/set_config_option", { sessionId: session.sessionId, configId: "model", value: "gpt-0" }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("offers the mode as a config option beside the model, confirms a change and keeps it with the session", async () => {
    const { agent, session, script } = await editor();
    expect(session.configOptions?.map((o) => o.id)).toEqual(["mode", "model"]);
    const set = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "mode",
      value: "ask",
    });
    expect(set.configOptions.find((o) => o.id === "mode")).toMatchObject({ currentValue: "ask", category: "mode" });
    const updates = script.updates.map((n) => n.update);
    expect(updates).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "ask" });
    const confirmed = updates.find((u) => u.sessionUpdate === "config_option_update");
    expect(confirmed && "configOptions" in confirmed ? confirmed.configOptions : []).toEqual(set.configOptions);
    await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "gpt-5.2",
    });
    await expect(
      agent.request("session/set_config_option", { sessionId: session.sessionId, configId: "effort", value: "x" }),
    ).rejects.toMatchObject({ code: -32602 });
    // A new agent process loads the session with both values.
    const other = await editor();
    const loaded = await other.agent.request("session/load", { sessionId: session.sessionId, cwd, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("ask");
    expect(loaded.configOptions?.find((o) => o.id === "mode")).toMatchObject({ currentValue: "ask" });
    expect(loaded.configOptions?.find((o) => o.id === "model")).toMatchObject({ currentValue: "gpt-5.2" });
  });

  it("offers effort, context and fast from the catalogue; the next prompt sends them, and session/load keeps them", async () => {
    const { agent, session, prompt } = await editor();
    const set = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "claude-opus-4-8",
    });
    expect(set.configOptions.map((o) => o.id)).toEqual(["mode", "model", "effort", "context"]);
    expect(set.configOptions.find((o) => o.id === "effort")).toMatchObject({ currentValue: "high" });
    await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "effort",
      value: "max",
    });
    await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "context",
      value: "1m",
    });
    await expect(
      agent.request("session/set_config_option", { sessionId: session.sessionId, configId: "effort", value: "ultra" }),
    ).rejects.toMatchObject({ code: -32602 });
    const echo =
      "Model: claude-opus-4-8; params: context=1m,effort=max,thinking=true; max_mode: true; model_details: none; " +
      "allowed tools: none";
    expect(textOf((await prompt("[[emu:echo-model]]")).updates)).toBe(echo);
    // A new agent process loads the session with the values, and its next prompt sends them.
    const other = await editor();
    const loaded = await other.agent.request("session/load", { sessionId: session.sessionId, cwd, mcpServers: [] });
    expect(loaded.configOptions?.find((o) => o.id === "effort")).toMatchObject({ currentValue: "max" });
    other.script.updates.length = 0;
    await other.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "[[emu:echo-model]]" }],
    });
    expect(textOf(other.script.updates)).toBe(echo);
    // A model without the parameter drops the value; fast appears where the model has it, off unless chosen.
    const gpt = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "gpt-5.5",
    });
    expect(gpt.configOptions.find((o) => o.id === "fast")).toMatchObject({ currentValue: "false" });
    expect(gpt.configOptions.find((o) => o.id === "effort")).toMatchObject({ currentValue: "medium" });
  });
});

describe("prompts and streaming", () => {
  it("streams text and thoughts and ends the turn", async () => {
    const { prompt } = await editor();
    const { response, updates } = await prompt("[[emu:think 3]] hello agent");
    expect(response.stopReason).toBe("end_turn");
    expect(textOf(updates)).toBe("You said: hello agent");
    const usage = (response._meta?.["cursor-bridge"] as { usage?: Record<string, number> } | undefined)?.usage;
    expect(usage?.outputTokens).toBeGreaterThan(0);
    expect(usage?.totalTokens).toBe((usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0));
    expect(textOf(updates, "agent_thought_chunk").length).toBeGreaterThan(0);
  });

  it("turns Cursor's todo list into a plan", async () => {
    const { prompt } = await editor();
    const { updates } = await prompt(
      '[[emu:todos {"write tests":"completed","ship it":"in_progress","drop":"cancelled"}]]',
    );
    const plan = updates.map((n) => n.update).find((u) => u.sessionUpdate === "plan");
    expect(plan).toEqual({
      sessionUpdate: "plan",
      entries: [
        { content: "write tests", priority: "medium", status: "completed" },
        { content: "ship it", priority: "medium", status: "in_progress" },
      ],
    });
    expect(textOf(updates)).toBe("Todos: 3");
  });

  it("takes images, resource links and embedded resources", async () => {
    const { agent, session, script } = await editor();
    const png = pngImage(3, 2).toString("base64");
    await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "[[emu:describe-image]]" },
        { type: "image", mimeType: "image/png", data: png },
      ],
    });
    expect(textOf(script.updates)).toMatch(/^Image 1: image\/png 3x2, \d+ bytes/);
    script.updates.length = 0;
    await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "see" },
        { type: "resource_link", name: "answer.ts", uri: `file://${cwd}/src/answer.ts` },
        { type: "resource", resource: { uri: "file:///notes.md", text: "remember the milk" } },
      ],
    });
    const echoed = textOf(script.updates);
    expect(echoed).toContain("[@answer.ts]");
    expect(echoed).toContain("remember the milk");
  });

  it("holds images to the HTTP doors' budget: PNG, JPEG, GIF or WebP by their bytes, 15 MiB in total", async () => {
    const { agent, session } = await editor();
    const notImage = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", data: Buffer.from("plain text").toString("base64") },
      ],
    });
    await expect(notImage).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("'prompt[1].data'"),
      data: { code: "invalid_request" },
    });
    const big = Buffer.concat([pngImage(3, 2), Buffer.alloc(15 * 1024 * 1024)]).toString("base64");
    const tooMuch = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "image", mimeType: "image/png", data: big }],
    });
    await expect(tooMuch).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("over the limit of 15728640 bytes"),
      data: { code: "invalid_request", detail: "image_too_large" },
    });
  });

  it("turns an upstream failure into a JSON-RPC error and keeps the session usable", async () => {
    const { agent, session, prompt } = await editor();
    const failed = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "[[emu:error usage_limit]]" }],
    });
    // A typed error keeps its own code and message: never JSON-RPC's "Internal error".
    await expect(failed).rejects.toMatchObject({
      code: -32011,
      message: expect.stringMatching(/^Cursor usage limit reached/),
      data: { code: "quota_exceeded", detail: "usage_limit", retryable: false },
    });
    const next = await prompt("still here");
    expect(next.response.stopReason).toBe("end_turn");
    expect(textOf(next.updates)).toBe("You said: still here");
  });

  it("answers a Cursor turn that never ends with a typed error, with or without an open tool call", async () => {
    const { agent, session, prompt } = await editor();
    const cut = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "[[emu:truncate]] cut short" }],
    });
    await expect(cut).rejects.toMatchObject({
      code: -32015,
      message: "Cursor ended the stream without finishing the turn; the answer is incomplete. Try again.",
      data: { code: "backend_protocol", detail: "upstream_truncated", retryable: false },
    });
    const open = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: '[[emu:truncate]] [[emu:native shell {"command":"make"}]]' }],
    });
    await expect(open).rejects.toMatchObject({
      code: -32015,
      message: expect.stringContaining("while a tool call was open"),
      data: { code: "backend_protocol", detail: "upstream_truncated" },
    });
    const next = await prompt("still here");
    expect(next.response.stopReason).toBe("end_turn");
    expect(textOf(next.updates)).toBe("You said: still here");
  });

  it("answers a context overflow with a JSON-RPC error saying the conversation is too long", async () => {
    const { agent, session } = await editor();
    const long = "lorem ipsum dolor ".repeat(27_000);
    await expect(
      agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: `${long} [[emu:overflow]]` }],
      }),
    ).rejects.toMatchObject({
      code: -32010,
      message: expect.stringMatching(
        /^The conversation is too long for the model's 200000-token context window\. Start a new session or run \/compact\.$/,
      ),
      data: { code: "context_length_exceeded", retryable: false },
    });
  });

  it("refuses audio with invalid params", async () => {
    const { agent, session } = await editor();
    await expect(
      agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "audio", mimeType: "audio/wav", data: "AAAA" }],
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("cancels a running turn: stopReason cancelled", async () => {
    const { agent, session, connection } = await editor();
    const running = agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "[[emu:tokens 2000]] [[emu:rate 50]]" }],
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await connection.agent.notify("session/cancel", { sessionId: session.sessionId });
    await expect(running).resolves.toMatchObject({ stopReason: "cancelled" });
  });

  it("serves several sessions from one agent, each continuing its own Cursor conversation", async () => {
    const { agent, session: first, script } = await editor();
    const second = await agent.request("session/new", { cwd, mcpServers: [] });
    const say = async (sessionId: string, text: string) => {
      script.updates.length = 0;
      await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      return textOf(script.updates.filter((n) => n.sessionId === sessionId));
    };
    await say(first.sessionId, "alpha");
    await say(second.sessionId, "beta");
    const runs = upstream.emulator.stats().runStreams;
    expect(await say(first.sessionId, "[[emu:recall]]")).toBe("First message: alpha");
    expect(await say(second.sessionId, "[[emu:recall]]")).toBe("First message: beta");
    expect(upstream.emulator.stats().runStreams - runs).toBe(2);
  });

  it("replays a stored session to a new agent on session/load", async () => {
    const first = await editor();
    await first.prompt("remember me");
    const second = connectEditor(upstream);
    open.push(second);
    await second.connection.agent.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: FULL,
    });
    await second.connection.agent.request("session/load", { sessionId: first.session.sessionId, cwd, mcpServers: [] });
    const replayed = second.script.updates.map((n) => n.update);
    expect(replayed[0]).toMatchObject({ sessionUpdate: "user_message_chunk", content: { text: "remember me" } });
    expect(replayed[1]).toMatchObject({
      sessionUpdate: "agent_message_chunk",
      content: { text: "You said: remember me" },
    });
    const next = await second.connection.agent.request("session/prompt", {
      sessionId: first.session.sessionId,
      prompt: [{ type: "text", text: "[[emu:recall]]" }],
    });
    expect(next.stopReason).toBe("end_turn");
    expect(textOf(second.script.updates)).toContain("First message: remember me");
  });
});

describe("Cursor's execs through the editor", () => {
  it("reads through fs/read_text_file, shown as a read tool call with its location", async () => {
    const { prompt, script } = await editor();
    const path = join(cwd, "src", "answer.ts");
    script.files.set(path, "unsaved buffer text\n");
    const { updates } = await prompt(`[[emu:native read {"path":"src/answer.ts"}]]`);
    expect(textOf(updates)).toContain("read returned: unsaved buffer text");
    const [call, done] = toolUpdates(updates);
    expect(call).toMatchObject({ sessionUpdate: "tool_call", kind: "read", status: "pending", locations: [{ path }] });
    expect(done).toMatchObject({ sessionUpdate: "tool_call_update", status: "completed" });
  });

  it("writes after permission, with diff content, and remembers allow-always", async () => {
    const { prompt, script } = await editor();
    const path = join(cwd, "src", "answer.ts");
    script.files.set(path, "old\n");
    script.permission = "allow-always";
    const { updates } = await prompt(`[[emu:native write {"path":"${path}","fileText":"new\\n"}]]`);
    expect(script.files.get(path)).toBe("new\n");
    expect(textOf(updates)).toContain("write returned: wrote 1 lines");
    expect(toolUpdates(updates)[0]).toMatchObject({ kind: "edit", locations: [{ path }] });
    const diff = toolUpdates(updates).find((u) => JSON.stringify(u).includes('"diff"'));
    expect(JSON.stringify(diff)).toContain('"oldText":"old\\n"');
    script.permission = "reject-once";
    await prompt(`[[emu:native write {"path":"${path}","fileText":"again\\n"}]]`);
    expect(script.files.get(path)).toBe("again\n");
    expect(script.calls.filter((c) => c.method === "session/request_permission")).toHaveLength(1);
  });

  it("asks with the tool call's title, kind, locations and diff, and does not read a new file first", async () => {
    const { prompt, script } = await editor();
    const path = join(cwd, "src", "brand-new.ts");
    const { updates } = await prompt(`[[emu:native write {"path":"src/brand-new.ts","fileText":"fresh\\n"}]]`);
    expect(script.calls.some((c) => c.method === "fs/read_text_file")).toBe(false);
    const asked = script.calls.find((c) => c.method === "session/request_permission");
    expect(asked?.params).toMatchObject({
      toolCall: {
        title: "Write src/brand-new.ts",
        kind: "edit",
        locations: [{ path }],
        content: [{ type: "diff", path, oldText: null, newText: "fresh\n" }],
      },
    });
    expect(script.files.get(path)).toBe("fresh\n");
    expect(toolUpdates(updates).at(-1)).toMatchObject({ status: "completed" });
  });

  it("remembers allow-always for one command exactly as it runs, in its folder, and shows both", async () => {
    const { prompt, script } = await editor();
    const asks = () => script.calls.filter((c) => c.method === "session/request_permission");
    script.permission = "allow-always";
    await prompt('[[emu:native shell {"command":"make test"}]]');
    expect(asks()[0]?.params).toMatchObject({
      toolCall: {
        title: "make test",
        kind: "execute",
        content: [{ type: "content", content: { text: "make test" } }],
      },
      options: expect.arrayContaining([
        { optionId: "allow-always", name: "Always allow `make test`", kind: "allow_always" },
      ]),
    });
    script.permission = "reject-once";
    const again = await prompt('[[emu:native shell {"command":"make test"}]]');
    expect(textOf(again.updates)).not.toContain("rejected");
    expect(asks()).toHaveLength(1);
    // Spacing is meaning inside quotes (`rm "a  b"` is another file than `rm "a b"`): another spacing asks again.
    const spaced = await prompt('[[emu:native shell {"command":"make  test"}]]');
    expect(asks()).toHaveLength(2);
    expect(textOf(spaced.updates)).toContain("rejected");
    const other = await prompt('[[emu:native shell {"command":"make clean"}]]');
    expect(asks()).toHaveLength(3);
    expect(textOf(other.updates)).toContain("rejected");
    // The same command in another folder asks again, and the question says where it runs.
    const elsewhere = await prompt('[[emu:native shell {"command":"make test","workingDirectory":"/home/someone"}]]');
    expect(asks()).toHaveLength(4);
    expect(asks()[3]?.params).toMatchObject({
      toolCall: { content: [{ type: "content", content: { text: "make test\n\n(runs in /home/someone)" } }] },
      options: expect.arrayContaining([
        { optionId: "allow-always", name: "Always allow `make test` in /home/someone", kind: "allow_always" },
      ]),
    });
    expect(textOf(elsewhere.updates)).toContain("rejected");
    expect(script.calls.filter((c) => c.method === "terminal/create")).toHaveLength(2);
  });

  it("asks before reading or writing a file outside the session's folder, and remembers only that file", async () => {
    const { prompt, script } = await editor();
    const asks = () => script.calls.filter((c) => c.method === "session/request_permission");
    const outside = "/etc/cursor-bridge-test/secret.txt";
    script.files.set(outside, "top secret\n");
    script.permission = "reject-once";
    const refused = await prompt(`[[emu:native read {"path":"${outside}"}]]`);
    expect(textOf(refused.updates)).toContain(`rejected: The user rejected reading ${outside}`);
    expect(textOf(refused.updates)).not.toContain("top secret");
    expect(script.calls.some((c) => c.method === "fs/read_text_file")).toBe(false);
    expect(asks()[0]?.params).toMatchObject({
      options: expect.arrayContaining([
        { optionId: "allow-always", name: `Always allow reading ${outside}`, kind: "allow_always" },
      ]),
    });
    script.permission = "allow-always";
    expect(textOf((await prompt(`[[emu:native read {"path":"${outside}"}]]`)).updates)).toContain("top secret");
    expect(textOf((await prompt(`[[emu:native read {"path":"${outside}"}]]`)).updates)).toContain("top secret");
    expect(asks()).toHaveLength(2);
    // A file inside the folder is read without asking.
    script.files.set(join(cwd, "inside.txt"), "fine\n");
    await prompt('[[emu:native read {"path":"inside.txt"}]]');
    expect(asks()).toHaveLength(2);
    // "Allow all writes" inside the folder does not cover a file outside it.
    await prompt(`[[emu:native write {"path":"${join(cwd, "a.txt")}","fileText":"a\\n"}]]`);
    expect(asks()).toHaveLength(3);
    script.permission = "reject-once";
    const home = "/home/someone/.bashrc";
    const write = await prompt(`[[emu:native write {"path":"${home}","fileText":"evil\\n"}]]`);
    expect(asks()).toHaveLength(4);
    expect(asks()[3]?.params).toMatchObject({
      options: expect.arrayContaining([
        { optionId: "allow-always", name: `Always allow writes to ${home}`, kind: "allow_always" },
      ]),
    });
    expect(script.files.has(home)).toBe(false);
    expect(textOf(write.updates)).toContain("rejected");
  });

  it("does not let 'allow all writes' cover a new file through a symbolic link to a folder elsewhere", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "cursor-bridge-acp-elsewhere-"));
    const link = join(cwd, "linkdir");
    symlinkSync(elsewhere, link);
    try {
      const { prompt, script } = await editor();
      const asks = () => script.calls.filter((c) => c.method === "session/request_permission");
      script.permission = "allow-always";
      await prompt(`[[emu:native write {"path":"${join(cwd, "inside-new.txt")}","fileText":"in\\n"}]]`);
      expect(asks()).toHaveLength(1);
      script.permission = "reject-once";
      const escaped = join(link, "escaped.txt");
      const write = await prompt(`[[emu:native write {"path":"${escaped}","fileText":"out\\n"}]]`);
      expect(asks()).toHaveLength(2);
      // Named by where it lands, not by the name it has in the folder.
      const lands = join(realpathSync(elsewhere), "escaped.txt");
      expect(asks()[1]?.params).toMatchObject({
        options: expect.arrayContaining([
          { optionId: "allow-always", name: `Always allow writes to ${lands}`, kind: "allow_always" },
        ]),
      });
      expect(script.files.has(escaped)).toBe(false);
      expect(textOf(write.updates)).toContain("rejected");
    } finally {
      rmSync(link, { force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("names where a write through a link in the folder lands, and remembers 'always' for that place only", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "cursor-bridge-acp-target-"));
    const first = join(elsewhere, "first.txt");
    const second = join(elsewhere, "second.txt");
    const link = join(cwd, "notes.txt");
    symlinkSync(first, link);
    try {
      const { prompt, script } = await editor();
      const asks = () => script.calls.filter((c) => c.method === "session/request_permission");
      script.permission = "allow-always";
      await prompt(`[[emu:native write {"path":"${link}","fileText":"one\\n"}]]`);
      expect(asks()).toHaveLength(1);
      // The prompt says the file in the folder is a link and where the write goes.
      const shown = JSON.stringify(asks()[0]?.params);
      expect(shown).toContain(`Always allow writes to ${first}`);
      expect(shown).toContain(`${link} is a link: this writes ${first}, outside the session's folder`);
      await prompt(`[[emu:native write {"path":"${link}","fileText":"two\\n"}]]`);
      expect(asks()).toHaveLength(1);
      // The link now leads somewhere else: what was allowed was the first place, so it asks again.
      rmSync(link);
      symlinkSync(second, link);
      script.permission = "reject-once";
      await prompt(`[[emu:native write {"path":"${link}","fileText":"three\\n"}]]`);
      expect(asks()).toHaveLength(2);
      expect(JSON.stringify(asks()[1]?.params)).toContain(`this writes ${second}`);
    } finally {
      rmSync(link, { force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("turns a refused write into a rejected result", async () => {
    const { prompt, script } = await editor();
    const path = join(cwd, "src", "answer.ts");
    script.files.set(path, "keep\n");
    script.permission = "reject-once";
    const { response, updates } = await prompt(`[[emu:native write {"path":"${path}","fileText":"lost\\n"}]]`);
    expect(response.stopReason).toBe("end_turn");
    expect(script.files.get(path)).toBe("keep\n");
    expect(textOf(updates)).toContain("write returned: rejected: The user rejected the write");
    expect(toolUpdates(updates).at(-1)).toMatchObject({ status: "failed" });
  });

  it("runs shell commands in a terminal and returns the exit code", async () => {
    const { prompt, script } = await editor();
    script.terminal = { output: "boom\n", exitCode: 3 };
    const { updates } = await prompt('[[emu:native shell {"command":"make test"}]]');
    const create = script.calls.find((c) => c.method === "terminal/create");
    expect(create?.params).toMatchObject({ command: "/bin/sh", args: ["-c", "make test"], cwd });
    expect(script.calls.some((c) => c.method === "terminal/release")).toBe(true);
    expect(textOf(updates)).toContain("shell returned: failed with exit code 3: boom");
    expect(JSON.stringify(toolUpdates(updates))).toContain('"terminalId":"term-1"');
    expect(toolUpdates(updates)[0]).toMatchObject({ kind: "execute", title: "make test" });
  });

  it("rejects execs the editor has no capability for, never running them another way", async () => {
    const { prompt, script } = await editor({});
    script.files.set(join(cwd, "x"), "x");
    const read = await prompt(`[[emu:native read {"path":"${join(cwd, "x")}"}]]`);
    expect(textOf(read.updates)).toContain("read returned: rejected: The editor does not offer fs/read_text_file");
    const shell = await prompt('[[emu:native shell {"command":"true"}]]');
    expect(textOf(shell.updates)).toContain("shell returned: rejected: The editor does not offer terminals");
    expect(script.calls).toHaveLength(0);
  });

  it("runs grep and ls itself inside cwd and refuses paths outside it", async () => {
    const { prompt } = await editor();
    const grep = await prompt('[[emu:native grep {"pattern":"answer = \\\\d+"}]]');
    expect(textOf(grep.updates)).toContain("answer.ts");
    expect(toolUpdates(grep.updates)[0]).toMatchObject({ kind: "search" });
    const ls = await prompt(`[[emu:native ls {"path":"${cwd}"}]]`);
    expect(textOf(ls.updates)).toContain("answer.ts");
    const outside = await prompt('[[emu:native ls {"path":"/etc"}]]');
    expect(textOf(outside.updates)).toContain("rejected: /etc is outside the session's folder");
  });

  it("answers a catastrophic grep pattern with a result while another session is answered, and a refused one as an error", async () => {
    writeFileSync(join(cwd, "redos.txt"), `${"a".repeat(34)}!\n`);
    const a = await editor();
    const b = await editor();
    const [redos, other] = await Promise.all([
      a.prompt('[[emu:native grep {"pattern":"(a+)+$","path":"redos.txt"}]]'),
      b.prompt("still here?"),
    ]);
    expect(textOf(other.updates)).toBe("You said: still here?");
    expect(redos.response.stopReason).toBe("end_turn");
    expect(toolUpdates(redos.updates).at(-1)).toMatchObject({ status: "completed" });
    const refused = await a.prompt('[[emu:native grep {"pattern":"(a)\\\\1","path":"redos.txt"}]]');
    expect(toolUpdates(refused.updates).at(-1)).toMatchObject({ status: "failed" });
    expect(textOf(refused.updates)).toContain("regex parse error");
  });
});

/** A stateless MCP server over streamable HTTP with one tool, `echo`. */
async function startHttpMcpServer(): Promise<{ url: string; calls: string[]; server: Server }> {
  const calls: string[] = [];
  const server = createServer(async (req, res) => {
    const mcp = new McpServer({ name: "web", version: "1.0.0" });
    mcp.registerTool("echo", { description: "Echoes", inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push(text);
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    });
    const transport = new StreamableHTTPServerTransport({}); // no session id generator: stateless;
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    await transport.handleRequest(req, res, text === "" ? undefined : JSON.parse(text));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/mcp`, calls, server };
}

describe("MCP servers from session/new", () => {
  it("offers an HTTP server's tools to Cursor, routes the call, and reports a server that fails", async () => {
    const http = await startHttpMcpServer();
    try {
      const { script, agent, session } = await editor(FULL, [
        { type: "http", name: "web", url: http.url, headers: [] },
        { name: "dead", command: join(cwd, "no-such-server"), args: [], env: [] },
      ]);
      expect(JSON.stringify(session._meta)).toContain('"server":"dead"');
      await agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: '[[emu:tool web__echo {"text":"over-http"}]]' }],
      });
      const text = textOf(script.updates);
      expect(text).toContain("MCP server dead failed to start");
      expect(text).toContain("web__echo returned: echo: over-http");
      expect(http.calls).toEqual(["over-http"]);
      expect(toolUpdates(script.updates)[0]).toMatchObject({ title: "web__echo", kind: "other" });
    } finally {
      http.server.closeAllConnections();
      await new Promise((resolve) => http.server.close(resolve));
    }
  });
});

describe("MCP tool calls ask permission", () => {
  it("asks before calling a tool (once, always for that tool of that server, reject); a read-only one runs", async () => {
    const log = join(cwd, "mcp-permission.log");
    const { prompt, script } = await editor(FULL, [
      { name: "echo", command: process.execPath, args: [ECHO_SERVER], env: [{ name: "ECHO_MCP_LOG", value: log }] },
    ]);
    const asks = () => script.calls.filter((c) => c.method === "session/request_permission");
    const calls = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
    // An editor rejecting every permission: the tool does not run, Cursor gets a refusal.
    script.permission = "reject-once";
    const refused = await prompt('[[emu:tool echo__echo {"text":"refused"}]]');
    expect(calls()).toBe("");
    expect(textOf(refused.updates)).toContain(
      "echo__echo returned: rejected: The user rejected calling echo of MCP server echo.",
    );
    expect(toolUpdates(refused.updates).at(-1)).toMatchObject({ status: "failed" });
    expect(asks()[0]?.params).toMatchObject({
      toolCall: {
        title: "echo__echo",
        content: [{ type: "content", content: { text: 'Call echo of MCP server echo with {"text":"refused"}' } }],
      },
      options: [
        { optionId: "allow-once", kind: "allow_once" },
        {
          optionId: "allow-always",
          name: "Always allow echo of MCP server echo in this session",
          kind: "allow_always",
        },
        { optionId: "reject-once", kind: "reject_once" },
      ],
    });
    script.permission = "cancelled";
    await prompt('[[emu:tool echo__echo {"text":"cancelled"}]]');
    expect(calls()).toBe("");
    script.permission = "allow-once";
    expect(textOf((await prompt('[[emu:tool echo__echo {"text":"once"}]]')).updates)).toContain("echo: once");
    expect(asks()).toHaveLength(3);
    script.permission = "allow-always";
    await prompt('[[emu:tool echo__echo {"text":"always"}]]');
    script.permission = "reject-once";
    expect(textOf((await prompt('[[emu:tool echo__echo {"text":"remembered"}]]')).updates)).toContain(
      "echo: remembered",
    );
    expect(asks()).toHaveLength(4);
    // A tool annotated readOnlyHint runs without asking.
    expect(textOf((await prompt('[[emu:tool echo__peek {"text":"look"}]]')).updates)).toContain("peek: look");
    expect(asks()).toHaveLength(4);
    expect(calls()).toBe("once\nalways\nremembered\npeek look\n");
  });
});

describe("MCP tool arguments as Cursor forms them", () => {
  // With [[emu:tool-args-id]] the exec's McpArgs id is not the one the pieces came under (docs/protocol.md §4.6).
  it.each([
    { directive: "", ids: "equal" },
    { directive: " [[emu:tool-args-id]]", ids: "differing" },
  ])(
    "shows the call at its first piece, then tool_call_update with rawInput growing, then the exact arguments ($ids ids)",
    async ({ directive }) => {
      const http = await startHttpMcpServer();
      try {
        const { script, agent, session } = await editor(FULL, [
          { type: "http", name: "web", url: http.url, headers: [] },
        ]);
        const text = "streamed in pieces of four characters: é, ü and more";
        const args = JSON.stringify({ text });
        await agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: `[[emu:tool-chunks 4]] [[emu:tool web__echo ${args}]]${directive}` }],
        });
        expect(http.calls).toEqual([text]);
        const updates = toolUpdates(script.updates);
        const id = updates[0]?.toolCallId;
        expect(updates[0]).toMatchObject({ sessionUpdate: "tool_call", title: "web__echo", kind: "other" });
        expect(updates.every((u) => u.toolCallId === id)).toBe(true);
        expect(updates.filter((u) => u.sessionUpdate === "tool_call")).toHaveLength(1);
        // The executor takes the call over with the final arguments (status pending), then settles it.
        const final = updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.status === "pending");
        expect(final).toBeGreaterThan(2);
        expect(updates[final]?.rawInput).toEqual({ text });
        const growing = updates
          .slice(1, final)
          .map((u) => (u.rawInput as { text?: string } | undefined)?.text)
          .filter((value): value is string => value !== undefined);
        expect(growing.length).toBeGreaterThanOrEqual(2);
        for (const [i, value] of growing.entries()) {
          expect(text.startsWith(value)).toBe(true);
          if (i > 0) expect(value.length).toBeGreaterThanOrEqual(growing[i - 1]?.length ?? 0);
        }
        expect(growing[0]?.length).toBeLessThan(text.length);
        expect(updates.at(-1)).toMatchObject({ status: "completed" });
      } finally {
        http.server.closeAllConnections();
        await new Promise((resolve) => http.server.close(resolve));
      }
    },
  );
});

describe("the Run while the editor works", () => {
  it("waits for a slow permission answer without calling it a stall", async () => {
    const slow = await startUpstream({ stallTimeoutMs: 1500 });
    const connected = connectEditor(slow);
    try {
      const agent = connected.connection.agent;
      await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: FULL });
      const session = await agent.request("session/new", { cwd, mcpServers: [] });
      connected.script.permissionDelayMs = 4000; // well past the stall timeout
      connected.script.terminal = { output: "slow but fine\n", exitCode: 0 };
      const response = await agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: '[[emu:native shell {"command":"make"}]]' }],
      });
      expect(response.stopReason).toBe("end_turn");
      expect(textOf(connected.script.updates)).toContain("shell returned: slow but fine");
    } finally {
      await connected.closeAgent();
      connected.connection.close();
      await slow.close();
    }
  });

  it("kills the editor's command when Cursor aborts the exec", async () => {
    const { prompt, script } = await editor();
    script.terminalHangs = true;
    const { response, updates } = await prompt('[[emu:abort-exec 300]] [[emu:native shell {"command":"sleep 100"}]]');
    expect(response.stopReason).toBe("end_turn");
    expect(script.calls.some((c) => c.method === "terminal/kill")).toBe(true);
    expect(textOf(updates)).toContain("shell returned: error: aborted by the server after 300 ms");
  });
});
