/**
 * Unary RPCs on both paths (docs/protocol.md §1.2, §1.3, §6): models, default model, NameAgent and usage, over
 * HTTP/2 and HTTP/1.1, in binary and JSON Connect.
 */
import { toJson } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { AiService } from "../../src/gen/aiserver/v1/ai_service_pb.js";
import {
  DashboardService,
  GetTeamAdminSettingsOrEmptyIfNotInTeamResponseSchema,
  GetTeamReposOrEmptyIfNotInTeamResponseSchema,
} from "../../src/gen/aiserver/v1/dashboard_pb.js";
import { ServerConfigService } from "../../src/gen/aiserver/v1/server_config_pb.js";
import { agentClient, BlobStore, cursorHeaders, driveRun, runRequest } from "./support/raw-client.js";

let emulator: Emulator;
let token: string;
beforeAll(async () => {
  emulator = await startEmulator();
  token = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});

function transport(httpVersion: "1.1" | "2") {
  return createConnectTransport({
    httpVersion,
    baseUrl: emulator.url,
    interceptors: [
      (next) => (request) => {
        for (const [k, v] of Object.entries(cursorHeaders(token))) request.header.set(k, v);
        return next(request);
      },
    ],
  });
}

describe.each(["2", "1.1"] as const)("over HTTP/%s", (httpVersion) => {
  it("agent.v1.AgentService and aiserver.v1.AiService list the same models", async () => {
    const agent = await agentClient(emulator.url, token, { httpVersion }).getUsableModels({});
    const ai = await createClient(AiService, transport(httpVersion)).getUsableModels({});
    const ids = agent.models.map((m) => m.modelId);
    expect(ids).toEqual(ai.models.map((m) => m.modelId));
    expect(ids).toEqual(
      expect.arrayContaining([
        "default",
        "composer-1",
        "claude-4.5-sonnet",
        "claude-4.5-sonnet-thinking",
        "gpt-5.2",
        "gpt-5.2-codex-high",
        "gemini-3-pro",
        "composer-2",
        "gemini-3-flash",
      ]),
    );
    const thinking = agent.models.find((m) => m.modelId === "claude-4.5-sonnet-thinking");
    expect(thinking?.thinkingDetails).toBeDefined();
    expect(agent.models.find((m) => m.modelId === "claude-4.5-sonnet")?.thinkingDetails).toBeUndefined();
  });

  it("GetDefaultModelForCli is Auto (`default`) on both services", async () => {
    expect((await agentClient(emulator.url, token, { httpVersion }).getDefaultModelForCli({})).model?.modelId).toBe(
      "default",
    );
    expect((await createClient(AiService, transport(httpVersion)).getDefaultModelForCli({})).model?.displayName).toBe(
      "Auto",
    );
  });

  it("NameAgent titles the chat from the message, without directives", async () => {
    const agent = agentClient(emulator.url, token, { httpVersion });
    expect((await agent.nameAgent({ userMessage: "refactor the parser into small modules please now" })).name).toBe(
      "Refactor the parser into small modules",
    );
    expect(
      (await createClient(AiService, transport(httpVersion)).nameAgent({ userMessage: "[[emu:recall]]" })).name,
    ).toBe("New Agent");
  });

  it("team, privacy and server-config RPCs answer as for a user not in a team (addendum 2 §9)", async () => {
    const dashboard = createClient(DashboardService, transport(httpVersion));
    expect(
      toJson(GetTeamReposOrEmptyIfNotInTeamResponseSchema, await dashboard.getTeamReposOrEmptyIfNotInTeam({})),
    ).toEqual({});
    expect(
      toJson(
        GetTeamAdminSettingsOrEmptyIfNotInTeamResponseSchema,
        await dashboard.getTeamAdminSettingsOrEmptyIfNotInTeam({}),
      ),
    ).toEqual({});
    expect((await dashboard.getUserPrivacyMode({})).isEnforcedByTeam).toBe(false);
    const config = await createClient(ServerConfigService, transport(httpVersion)).getServerConfig({});
    expect(config.configVersion).toMatch(/^[0-9a-f-]{36}$/);
    expect(config.useNlbForNal).toBe(false);
  });

  it("GetCurrentPeriodUsage counts completed turns", async () => {
    const dashboard = createClient(DashboardService, transport(httpVersion));
    const before = await dashboard.getCurrentPeriodUsage({});
    await driveRun(agentClient(emulator.url, token), runRequest("count me"), new BlobStore());
    const after = await dashboard.getCurrentPeriodUsage({});
    expect(after.enabled).toBe(true);
    expect((after.planUsage?.totalSpend ?? 0) - (before.planUsage?.totalSpend ?? 0)).toBe(2);
    expect(after.planUsage?.remaining).toBe((after.planUsage?.limit ?? 0) - (after.planUsage?.totalSpend ?? 0));
    expect(after.billingCycleEnd).toBeGreaterThan(after.billingCycleStart);
  });
});

it("Connect JSON works too (RAPH calls GetUsableModels with `{}`)", async () => {
  const response = await fetch(`${emulator.url}/aiserver.v1.AiService/GetUsableModels`, {
    method: "POST",
    headers: { ...cursorHeaders(token), "content-type": "application/json", "connect-protocol-version": "1" },
    body: "{}",
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { models: { modelId: string }[] };
  expect(body.models[0]?.modelId).toBe("default");
});

it("turn_ended carries the documented counts, and GET /v1/agents/{id}/usage sums them per agent id", async () => {
  const agentId = "agent-7d0c2a4e-3f7b-4f1e-8c55-9a0b1c2d3e4f";
  const run = await driveRun(
    agentClient(emulator.url, token),
    runRequest("hi there [[emu:think 2]] [[emu:cached 5]]", { conversationId: agentId }),
    new BlobStore(),
  );
  expect(run.text).toBe("You said: hi there");
  const ended = run.messages.flatMap((m) =>
    m.message.case === "interactionUpdate" && m.message.value.message.case === "turnEnded"
      ? [m.message.value.message.value]
      : [],
  );
  // U = 2 ("hi there"); input = U + cache read + cache write (addendum 3 U6); output = 4 reply + 2 reasoning tokens.
  expect(ended[0]).toMatchObject({
    inputTokens: 9n,
    outputTokens: 6n,
    cacheReadTokens: 5n,
    cacheWriteTokens: 2n,
    reasoningTokens: 2n,
  });
  const usage = await fetch(`${emulator.url}/v1/agents/${agentId}/usage`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(usage.status).toBe(200);
  const body = (await usage.json()) as { usage: unknown; runs: unknown[] };
  const counts = { inputTokens: 9, outputTokens: 6, cacheReadTokens: 5, cacheWriteTokens: 2, reasoningTokens: 2 };
  expect(body.usage).toEqual(counts);
  expect(body.runs).toEqual([expect.objectContaining({ usage: counts })]);
});
