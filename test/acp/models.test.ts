/**
 * The ACP session's model as the catalogue names it, in-process on the real engine and emulator: `acp --model` is
 * checked at the first session/new (a model Cursor does not serve is refused naming the ones it does), an alias set
 * through session/set_config_option or `/model` is kept as the id it names, and `usage_update.size` is the
 * catalogue's context window (the chosen Context tier's). Also: session/new refuses a cwd that is not a folder.
 */
import { join } from "node:path";
import { PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { type AgentOptions, useAcpFixture } from "./support.js";

const acp = useAcpFixture("cursor-bridge-acp-models-");

async function editor(options: AgentOptions = {}) {
  const connected = acp.connect(options);
  const agent = connected.connection.agent;
  await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return { ...connected, agent };
}

function usageSize(updates: SessionNotification[]): number | undefined {
  const usage = updates.map((n) => n.update).find((u) => u.sessionUpdate === "usage_update");
  return usage?.sessionUpdate === "usage_update" ? usage.size : undefined;
}

describe("the session's model", () => {
  it("refuses an --model Cursor does not serve at session/new, naming the models it does", async () => {
    const { agent } = await editor({ defaultModel: "bogus-model" });
    const refused = agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
    await expect(refused).rejects.toMatchObject({ code: -32602 });
    const error = (await refused.catch((e: unknown) => e)) as { message: string; data?: { models?: string[] } };
    expect(error.message).toContain("--model bogus-model");
    expect(error.message).toContain("composer-1");
    expect(error.message).not.toMatch(/\/v1\/models/);
    expect(error.data?.models).toContain("gpt-5.2");
  });

  it("keeps an alias as the id it names: --model, session/set_config_option and /model", async () => {
    const { agent, script } = await editor({ defaultModel: "sonnet-4.5" });
    const session = await agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
    const model = () => session.configOptions?.find((o) => o.id === "model");
    expect(model()).toMatchObject({ currentValue: "claude-4.5-sonnet" });
    const set = await agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "model",
      value: "opus-4.6",
    });
    const chosen = set.configOptions.find((o) => o.id === "model");
    expect(chosen).toMatchObject({ currentValue: "claude-4.6-opus-high" });
    const offered = chosen?.type === "select" ? chosen.options : [];
    expect(offered.some((o) => "value" in o && o.value === "claude-4.6-opus-high")).toBe(true);
    script.updates.length = 0;
    await agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "/model sonnet-4.6" }],
    });
    const said = script.updates
      .map((n) => n.update)
      .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
      .join("");
    expect(said).toBe("Model: claude-4.6-sonnet-medium.");
  });

  it("reports the catalogue's context window in usage_update, the chosen Context tier's when there is one", async () => {
    const { agent, script } = await editor({ defaultModel: "cursor-small" });
    const session = await agent.request("session/new", { cwd: acp.dir, mcpServers: [] });
    const prompt = async () => {
      script.updates.length = 0;
      await agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text: "hi" }] });
      return usageSize(script.updates);
    };
    expect(await prompt()).toBe(128_000);
    for (const [configId, value] of [
      ["model", "claude-opus-4-8"],
      ["context", "1m"],
    ] as const) {
      await agent.request("session/set_config_option", { sessionId: session.sessionId, configId, value });
    }
    expect(await prompt()).toBe(1_000_000);
  });
});

describe("ACP's older session/set_model (Zed's model picker)", () => {
  /** The unstable method the SDK's schema no longer lists: sent as editors that use it send it. */
  type SetModel = (method: string, params: unknown) => Promise<unknown>;

  it("advertises the models, switches the model like the model option, and refuses an unknown one", async () => {
    const { agent, script } = await editor({ defaultModel: "sonnet-4.5" });
    const session = (await agent.request("session/new", { cwd: acp.dir, mcpServers: [] })) as {
      sessionId: string;
      models?: { currentModelId: string; availableModels: { modelId: string; name: string }[] };
    };
    expect(session.models?.currentModelId).toBe("claude-4.5-sonnet");
    expect(session.models?.availableModels.map((m) => m.modelId)).toContain("claude-4.6-opus-high");
    const request = agent.request.bind(agent) as unknown as SetModel;
    script.updates.length = 0;
    // An alias, kept as the id it names, as session/set_config_option keeps it.
    expect(await request("session/set_model", { sessionId: session.sessionId, modelId: "opus-4.6" })).toEqual({});
    const update = script.updates.map((n) => n.update).find((u) => u.sessionUpdate === "config_option_update");
    const model = update?.sessionUpdate === "config_option_update" ? update.configOptions : [];
    expect(model.find((o) => o.id === "model")).toMatchObject({ currentValue: "claude-4.6-opus-high" });
    const loaded = (await agent.request("session/load", {
      sessionId: session.sessionId,
      cwd: acp.dir,
      mcpServers: [],
    })) as {
      models?: { currentModelId: string };
    };
    expect(loaded.models?.currentModelId).toBe("claude-4.6-opus-high");

    const unknown = request("session/set_model", { sessionId: session.sessionId, modelId: "no-such-model" });
    await expect(unknown).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("no-such-model") });
    await expect(request("session/set_model", { sessionId: session.sessionId })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(request("session/set_model", { sessionId: "gone", modelId: "composer-1" })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(
      request("session/set_model", { sessionId: session.sessionId, modelId: "x".repeat(300) }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});

describe("session/new's cwd", () => {
  it("is refused with invalid params naming it when it is not a folder", async () => {
    const { agent } = await editor();
    const missing = join(acp.dir, "no-such-folder");
    const refused = agent.request("session/new", { cwd: missing, mcpServers: [] });
    await expect(refused).rejects.toMatchObject({ code: -32602, data: { cwd: missing } });
  });
});
