/**
 * The emulator as a complete offline Cursor (docs/protocol.md §1.2, §1.3, §4.13, §6.1): what Cursor's SDK and CLI
 * call besides `Run`, read in the shapes cursor-protocol-addendum-3.md gives (P16 for the REST model list, U6 for
 * the REST usage, E6 for error classification, X2 for the SDK's extra headers, U1–U3 for the plan calls).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Emulator, startEmulator } from "../../src/emulator/index.js";
import { AgentClientMessageSchema, AgentServerMessageSchema } from "../../src/gen/agent/v1/agent_pb.js";
import { AgentService } from "../../src/gen/agent/v1/agent_service_pb.js";
import { AiService } from "../../src/gen/aiserver/v1/ai_service_pb.js";
import { AnalyticsService } from "../../src/gen/aiserver/v1/analytics_pb.js";
import { DashboardService, LimitHitStage } from "../../src/gen/aiserver/v1/dashboard_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import { ServerConfigService } from "../../src/gen/aiserver/v1/server_config_pb.js";
import { agentClient, BlobStore, cursorHeaders, driveRun, runRequest } from "./support/raw-client.js";
import { driveSse } from "./support/sse-client.js";

let emulator: Emulator;
let token: string;
const API_KEY = "key_offline_cursor_0123456789";
beforeAll(async () => {
  emulator = await startEmulator({ apiKeys: [API_KEY] });
  token = emulator.issueTokens().accessToken;
});
afterAll(async () => {
  await emulator.close();
});

type Service =
  | typeof AgentService
  | typeof AiService
  | typeof DashboardService
  | typeof ServerConfigService
  | typeof AnalyticsService;

function client<S extends Service>(service: S, headers = cursorHeaders(token)) {
  return createClient(
    service,
    createConnectTransport({
      httpVersion: "2",
      baseUrl: emulator.url,
      interceptors: [
        (next) => (request) => {
          for (const [k, v] of Object.entries(headers)) request.header.set(k, v);
          return next(request);
        },
      ],
    }),
  );
}

/** The SDK's REST headers (P16): the raw API key, client type `sdk`. */
function sdkRestHeaders(): Record<string, string> {
  return {
    authorization: `Bearer ${API_KEY}`,
    "x-cursor-client-type": "sdk",
    "x-cursor-client-version": "sdk-1.0.32",
    "x-ghost-mode": "true",
  };
}

/** P16's `ModelListItem`. */
interface ModelListItem {
  id: string;
  displayName: string;
  description?: string;
  aliases?: string[];
  parameters?: { id: string; displayName?: string; values: { value: string; displayName?: string }[] }[];
  variants?: {
    params: { id: string; value: string }[];
    displayName: string;
    description?: string;
    isDefault?: boolean;
  }[];
}

describe("GET /v1/models (P16)", () => {
  it("answers {items:[ModelListItem]} and joins AvailableModels and GetUsableModels one for one", async () => {
    const response = await fetch(`${emulator.url}/v1/models`, { headers: sdkRestHeaders() });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: ModelListItem[] };
    expect(Object.keys(body)).toEqual(["items"]);
    const items = body.items;
    for (const item of items) {
      expect(typeof item.id).toBe("string");
      expect(typeof item.displayName).toBe("string");
      for (const key of Object.keys(item)) {
        expect(["id", "displayName", "description", "aliases", "parameters", "variants"]).toContain(key);
      }
    }

    const available = await client(AiService).availableModels({ useModelParameters: true });
    const usable = await client(AgentService).getUsableModels({});
    // One item per AvailableModels row, in its order.
    expect(items.map((i) => i.id)).toEqual(available.models.map((m) => m.name));

    const reached = new Map<string, string>();
    const usableById = new Map(usable.models.map((m) => [m.modelId, m]));
    for (const item of items) {
      const row = available.models.find((m) => m.name === item.id);
      expect(row, item.id).toBeDefined();
      if (row === undefined) continue;
      expect(item.displayName).toBe(row.clientDisplayName);
      if (item.variants === undefined) {
        // A flat model: itself a GetUsableModels row, with no parameters anywhere.
        expect(row.variants).toHaveLength(0);
        expect(item.parameters).toBeUndefined();
        expect(usableById.get(item.id)?.displayName, item.id).toBe(item.displayName);
        expect(reached.has(item.id)).toBe(false);
        reached.set(item.id, item.id);
        continue;
      }
      // A base model: the same parameter definitions, and each variant found by its values in AvailableModels,
      // whose legacy slug is the GetUsableModels row of the same display name.
      expect(item.parameters?.map((p) => p.id)).toEqual(row.parameterDefinitions.map((d) => d.id));
      for (const parameter of item.parameters ?? []) {
        const values = new Set(item.variants.flatMap((v) => v.params.filter((p) => p.id === parameter.id)));
        for (const { value } of values) expect(parameter.values.map((v) => v.value)).toContain(value);
      }
      expect(item.variants).toHaveLength(row.variants.length);
      expect(item.variants.filter((v) => v.isDefault === true)).toHaveLength(1);
      for (const variant of item.variants) {
        const key = JSON.stringify(variant.params);
        const match = row.variants.find(
          (v) => JSON.stringify(v.parameterValues.map(({ id, value }) => ({ id, value }))) === key,
        );
        expect(match, `${item.id} ${key}`).toBeDefined();
        if (match === undefined) continue;
        expect(variant.displayName).toBe(match.displayName);
        expect(variant.isDefault === true).toBe(match.isDefaultNonMaxConfig);
        const slug = match.legacySlug ?? "";
        expect(usableById.get(slug)?.displayName, slug).toBe(variant.displayName);
        expect(reached.has(slug), slug).toBe(false);
        reached.set(slug, item.id);
      }
    }
    // Every GetUsableModels row is reached exactly once.
    expect([...reached.keys()].sort()).toEqual(usable.models.map((m) => m.modelId).sort());
    expect(items.filter((i) => i.variants !== undefined).length).toBeGreaterThanOrEqual(8);
  });

  it("lets the SDK validate an id against id or aliases", async () => {
    const { items } = (await (await fetch(`${emulator.url}/v1/models`, { headers: sdkRestHeaders() })).json()) as {
      items: ModelListItem[];
    };
    const known = (id: string) => items.some((i) => i.id === id || (i.aliases ?? []).includes(id));
    expect(known("auto")).toBe(true);
    expect(known("claude-opus-4-8")).toBe(true);
    expect(known("no-such-model")).toBe(false);
  });

  it("is 401 without a key", async () => {
    expect((await fetch(`${emulator.url}/v1/models`)).status).toBe(401);
  });
});

/** E6's no-retry values, in the SDK's order. */
const FINAL_TYPES = [
  "IMAGE_TOO_LARGE",
  "MAX_TOKENS",
  "CONVERSATION_TOO_LONG",
  "CONTENT_POLICY",
  "DEPRECATED",
  "MAX_MODE_REQUIRED",
  "MODEL_NO_LONGER_SUPPORTED",
  "UNSUPPORTED_REGION",
  "OUTDATED_CLIENT",
] as const;

describe("final errors (E6)", () => {
  it.each(FINAL_TYPES)("[[emu:error %s]] carries is_retryable: false and the error-type trailer", async (type) => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest(`[[emu:error ${type}]]`),
      new BlobStore(),
    );
    expect(result.error).toBeDefined();
    expect(result.error?.metadata.get("x-cursor-inference-request-error-type")).toBe(type);
    const details = result.error?.findDetails(ErrorDetailsSchema)[0];
    expect(details?.details?.isRetryable).toBe(false);
    const expected =
      type === "IMAGE_TOO_LARGE"
        ? ErrorDetails_Error.CLAUDE_IMAGE_TOO_LARGE
        : type === "CONTENT_POLICY"
          ? ErrorDetails_Error.CUSTOM_MESSAGE
          : ErrorDetails_Error[type];
    expect(details?.error).toBe(expected);
  });

  it("the trailer travels on RunSSE's end-of-stream too", async () => {
    const result = await driveSse(emulator.url, token, runRequest("[[emu:error MAX_TOKENS]]"), new BlobStore());
    expect(result.error?.metadata.get("x-cursor-inference-request-error-type")).toBe("MAX_TOKENS");
  });

  it("`retryable` marks one retryable: is_retryable: true and no error-type header", async () => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest("[[emu:error CONVERSATION_TOO_LONG retryable]]"),
      new BlobStore(),
    );
    expect(result.error?.findDetails(ErrorDetailsSchema)[0]?.details?.isRetryable).toBe(true);
    expect(result.error?.metadata.get("x-cursor-inference-request-error-type")).toBeNull();
  });

  it("a retryable kind carries neither", async () => {
    const result = await driveRun(
      agentClient(emulator.url, token),
      runRequest("[[emu:error PROVIDER_ERROR]]"),
      new BlobStore(),
    );
    expect(result.error?.code).toBe(Code.Unavailable);
    expect(result.error?.findDetails(ErrorDetailsSchema)[0]?.details?.isRetryable).toBeUndefined();
    expect(result.error?.metadata.get("x-cursor-inference-request-error-type")).toBeNull();
  });

  it("an outdated client on a unary call is refused as final (a Run gets E1's Update Required instead)", async () => {
    const error = await client(
      AgentService,
      cursorHeaders(token, { "x-cursor-client-version": "cli-2024.01.01-0000000" }),
    )
      .getUsableModels({})
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(error?.findDetails(ErrorDetailsSchema)[0]?.error).toBe(ErrorDetails_Error.OUTDATED_CLIENT);
    expect(error?.findDetails(ErrorDetailsSchema)[0]?.details?.isRetryable).toBe(false);
    expect(error?.metadata.get("x-cursor-inference-request-error-type")).toBe("OUTDATED_CLIENT");
  });
});

describe("strictness: a token is enough outside a turn, a turn needs the client headers", () => {
  const tokenOnly = () => ({ authorization: `Bearer ${token}` });

  it("GetUserPrivacyMode and GetServerConfig answer a valid token without x-cursor-client-type", async () => {
    const privacy = await client(DashboardService, tokenOnly()).getUserPrivacyMode({});
    expect(privacy.isEnforcedByTeam).toBe(false);
    const config = await client(ServerConfigService, tokenOnly()).getServerConfig({});
    expect(config.configVersion).not.toBe("");
  });

  it("the same calls with a token that is not valid are refused", async () => {
    const error = await client(ServerConfigService, { authorization: "Bearer not-a-token" })
      .getServerConfig({})
      .then(
        () => undefined,
        (e: unknown) => e as { code?: Code },
      );
    expect(error?.code).toBe(Code.Unauthenticated);
  });

  it("a Run without x-cursor-client-type is still refused", async () => {
    const result = await driveRun(
      agentClient(emulator.url, token, { overrides: { "x-cursor-client-type": null } }),
      runRequest("hi"),
      new BlobStore(),
    );
    expect(result.error?.code).toBe(Code.InvalidArgument);
    expect(result.error?.rawMessage).toContain("x-cursor-client-type");
  });
});

/** U6's REST usage. */
interface UsageBody {
  usage: Record<string, number>;
  cost?: { rawCostCents: number; chargedCents: number };
  runs: { runId: string; usage: Record<string, number>; cost?: { rawCostCents: number; chargedCents: number } }[];
}

describe("GET /v1/agents/{id}/usage?runId= (U6) and GET /v1/me", () => {
  it("answers {usage, cost, runs[]} for the agent, and one run's with ?runId=", async () => {
    const agentId = "agent-1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d";
    const runIds = ["11111111-2222-4333-8444-555555555555", "66666666-7777-4888-9999-aaaaaaaaaaaa"];
    const store = new BlobStore();
    let checkpoint: Awaited<ReturnType<typeof driveRun>>["checkpoint"];
    for (const [index, runId] of runIds.entries()) {
      const run = await driveRun(
        agentClient(emulator.url, token, { overrides: { "x-request-id": runId } }),
        runRequest(index === 0 ? "one two [[emu:think 3]]" : "three", {
          conversationId: agentId,
          ...(checkpoint === undefined ? {} : { state: checkpoint }),
        }),
        store,
      );
      expect(run.turnEnded).toBe(true);
      checkpoint = run.checkpoint;
    }
    const get = async (query = "") =>
      fetch(`${emulator.url}/v1/agents/${agentId}/usage${query}`, { headers: sdkRestHeaders() });
    const all = (await (await get()).json()) as UsageBody;
    expect(Object.keys(all).sort()).toEqual(["cost", "runs", "usage"]);
    expect(all.runs.map((r) => r.runId)).toEqual(runIds);
    for (const key of ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"]) {
      expect(all.usage[key]).toBe((all.runs[0]?.usage[key] ?? 0) + (all.runs[1]?.usage[key] ?? 0));
    }
    expect(all.runs[0]?.usage.reasoningTokens).toBe(3);
    expect(all.cost?.rawCostCents).toBeGreaterThan(0);
    expect(all.cost?.chargedCents).toBe(all.cost?.rawCostCents);

    const one = (await (await get(`?runId=${runIds[1]}`)).json()) as UsageBody;
    expect(one.runs).toHaveLength(1);
    expect(one.runs[0]?.runId).toBe(runIds[1]);
    expect(one.usage).toEqual(one.runs[0]?.usage);
    expect((await get("?runId=no-such-run")).status).toBe(404);
  });

  it("GET /v1/me names who the key belongs to; no key is 401", async () => {
    const me = await fetch(`${emulator.url}/v1/me`, { headers: sdkRestHeaders() });
    expect(me.status).toBe(200);
    const body = (await me.json()) as Record<string, string>;
    expect(body).toEqual({
      apiKeyName: expect.any(String),
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      userEmail: "dev@example.com",
      userId: expect.stringMatching(/^user_/),
    });
    expect((await fetch(`${emulator.url}/v1/me`)).status).toBe(401);
  });
});

describe("the SDK's extra headers (X2) are accepted and recorded in the run's record", () => {
  it("GET /emulator/runs/<id> and the stats show them", async () => {
    const runId = "0f0e0d0c-0b0a-4908-8706-050403020100";
    const extra = {
      "x-request-id": runId,
      "x-cursor-client-type": "sdk",
      "x-cursor-client-version": "sdk-1.0.32",
      "x-blob-encryption-key": "ab".repeat(32),
      "x-original-request-id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
      "x-parent-request-id": "parent-1",
      "x-root-parent-request-id": "root-1",
      "x-parent-agent-tool-call-id": "toolu_01",
      "x-direct-meta-parent-child-subagent": "true",
    };
    const run = await driveRun(
      agentClient(emulator.url, token, { overrides: extra }),
      runRequest("hello [[emu:tokens 2]]"),
      new BlobStore(),
    );
    expect(run.turnEnded).toBe(true);
    const record = await fetch(`${emulator.url}/emulator/runs/${runId}`);
    expect(record.status).toBe(200);
    const body = (await record.json()) as { runId: string; headers: Record<string, string>; outcome: string };
    expect(body.runId).toBe(runId);
    expect(body.headers).toMatchObject(extra);
    expect(body.outcome).toBe("completed");
    expect(emulator.stats().turns.find((t) => t.runId === runId)?.headers).toMatchObject(extra);
    expect((await fetch(`${emulator.url}/emulator/runs/unknown-run`)).status).toBe(404);
  });

  it("RunSSE's record is found by its bidi request id", async () => {
    const result = await driveSse(emulator.url, token, runRequest("hi"), new BlobStore());
    expect(result.turnEnded).toBe(true);
    const record = await fetch(`${emulator.url}/emulator/runs/${result.requestId}`);
    expect(((await record.json()) as { transport: string }).transport).toBe("http1");
  });
});

describe("aiserver.v1.AnalyticsService", () => {
  it("BootstrapStatsig and TrackEvents answer, with a token and without a client type", async () => {
    const analytics = client(AnalyticsService, { authorization: `Bearer ${token}` });
    await expect(analytics.bootstrapStatsig({})).resolves.toBeDefined();
    await expect(analytics.trackEvents({})).resolves.toBeDefined();
    // Connect JSON with fields the schema does not declare, as a client with a richer schema sends them.
    const json = await fetch(`${emulator.url}/aiserver.v1.AnalyticsService/TrackEvents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({}),
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({});
  });
});

describe("X4: RunPoll, GetPromptContextUsage, UpdateConversationMetadata", () => {
  it("RunPoll answers unimplemented, as a server without it", async () => {
    const stream = client(AgentService).runPoll({});
    const error = await (async () => {
      try {
        for await (const _ of stream) return undefined;
      } catch (e) {
        return e as { code?: Code };
      }
      return undefined;
    })();
    expect(error?.code).toBe(Code.Unimplemented);
  });

  it("GetPromptContextUsage and UpdateConversationMetadata answer", async () => {
    await expect(client(AgentService).getPromptContextUsage({})).resolves.toBeDefined();
    await expect(client(AgentService).updateConversationMetadata({})).resolves.toBeDefined();
  });
});

describe("plan usage (U1–U3)", () => {
  it("GetCurrentPeriodUsage carries the Auto/API buckets and their percentages", async () => {
    const dashboard = client(DashboardService);
    const before = await dashboard.getCurrentPeriodUsage({});
    const run = await driveRun(
      agentClient(emulator.url, token),
      runRequest("count me", { model: "default" }),
      new BlobStore(),
    );
    expect(run.turnEnded).toBe(true);
    const after = await dashboard.getCurrentPeriodUsage({});
    const plan = after.planUsage;
    expect(plan?.autoSpend).toBeGreaterThan(before.planUsage?.autoSpend ?? 0);
    expect(plan?.totalSpend).toBe((plan?.autoSpend ?? 0) + (plan?.apiSpend ?? 0));
    expect(plan?.totalPercentUsed).toBeCloseTo((100 * (plan?.totalSpend ?? 0)) / (plan?.limit ?? 1));
    expect(plan?.autoPercentUsed).toBeCloseTo((100 * (plan?.autoSpend ?? 0)) / (plan?.autoLimit ?? 1));
    expect(after.autoBucketModels).toContain("default");
  });

  it("GetPlanInfo, GetHardLimit and GetUsageLimitStatusAndActiveGrants answer in U2–U3's units", async () => {
    const dashboard = client(DashboardService);
    const info = await dashboard.getPlanInfo({});
    expect(info.planInfo?.planName).toBe("Pro");
    expect(info.planInfo?.includedAmountCents).toBe(2000);
    expect(info.planInfo?.billingCycleEnd).toBeGreaterThan(BigInt(Date.now()));
    expect((await dashboard.getHardLimit({})).hardLimit).toBe(2147483647);
    const fine = await dashboard.getUsageLimitStatusAndActiveGrants({});
    expect(fine.stage).toBe(LimitHitStage.UNSPECIFIED);
    const limited = await startEmulator();
    try {
      const userToken = limited.issueTokens({ userId: "user_limited" }).accessToken;
      limited.limitUsage("user_limited");
      const status = await createClient(
        DashboardService,
        createConnectTransport({
          httpVersion: "2",
          baseUrl: limited.url,
          interceptors: [
            (next) => (request) => {
              request.header.set("authorization", `Bearer ${userToken}`);
              return next(request);
            },
          ],
        }),
      ).getUsageLimitStatusAndActiveGrants({});
      expect(status.stage).toBe(LimitHitStage.HARD_BLOCK);
      expect(status.errorTitle).toContain("usage limit");
      expect(status.resetAtMs).toBeGreaterThan(BigInt(Date.now()));
    } finally {
      await limited.close();
    }
  });
});

describe("--record DIR (recordDir)", () => {
  it("writes every Run's client and server messages as JSON lines that decode with the schema", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emulator-record-"));
    const recording = await startEmulator({ recordDir: dir });
    try {
      const recToken = recording.issueTokens().accessToken;
      const runId = "5e5e5e5e-1111-4222-8333-444444444444";
      const ok = await driveRun(
        agentClient(recording.url, recToken, { overrides: { "x-request-id": runId } }),
        runRequest("record me [[emu:tokens 3]]"),
        new BlobStore(),
      );
      expect(ok.turnEnded).toBe(true);
      const sse = await driveSse(recording.url, recToken, runRequest("over sse"), new BlobStore());
      expect(sse.turnEnded).toBe(true);
      const failed = await driveRun(
        agentClient(recording.url, recToken),
        runRequest("[[emu:error MAX_TOKENS]]"),
        new BlobStore(),
      );
      expect(failed.error).toBeDefined();

      // The files are complete once the streams ended; wait for the writes to land on a loaded machine.
      await waitFor(() => (recording.stats().turns.every((t) => t.outcome !== undefined) ? true : undefined));
      const files = await waitFor(() => {
        const names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
        const texts = names.map((n) => readFileSync(join(dir, n), "utf8"));
        // Complete: three files, whole lines, and the failed Run's error written (it can land after its last frame).
        return names.length === 3 && texts.every((t) => t.endsWith("\n")) && texts.some((t) => t.includes('"error"'))
          ? names
          : undefined;
      });
      expect(files.some((n) => n.startsWith(runId))).toBe(true);
      expect(files.some((n) => n.startsWith(sse.requestId))).toBe(true);
      for (const name of files) {
        expect(statSync(join(dir, name)).mode & 0o077).toBe(0);
        const lines = readFileSync(join(dir, name), "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { from: string; type?: string; message?: JsonValue; error?: { code: string } });
        expect(lines[0]?.from).toBe("client");
        expect(lines.some((l) => l.from === "server")).toBe(true);
        for (const line of lines) {
          if (line.error !== undefined) continue;
          const schema = line.from === "client" ? AgentClientMessageSchema : AgentServerMessageSchema;
          expect(line.type).toBe(schema.typeName);
          expect(() => fromJson(schema, line.message ?? null)).not.toThrow();
        }
        const first = fromJson(AgentClientMessageSchema, lines[0]?.message ?? null);
        expect(first.message.case).toBe("runRequest");
      }
      const failedFile = files.find((n) => !n.startsWith(runId) && !n.startsWith(sse.requestId)) ?? "";
      // The server's last word is the error; a client message already in flight (a heartbeat) may be recorded after it.
      const fromServer = readFileSync(join(dir, failedFile), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { from: string })
        .filter((l) => l.from === "server");
      expect(fromServer.at(-1)).toMatchObject({ from: "server", error: { code: "InvalidArgument" } });
    } finally {
      await recording.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting for the recordings");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
