/**
 * Registers the emulated services on a connect-es router (docs/protocol.md §1.2, §1.3, §4.2, §4.3, §6):
 * agent.v1.AgentService (Run, RunSSE, GetUsableModels, GetDefaultModelForCli, NameAgent, GetPromptContextUsage,
 * UpdateConversationMetadata; RunPoll `unimplemented`), aiserver.v1.AnalyticsService,
 * aiserver.v1.AiService (the CLI's model calls and NameAgent), BidiAppend (on BidiService and AgentService) and
 * aiserver.v1.DashboardService (GetCurrentPeriodUsage, GetPlanInfo, GetHardLimit,
 * GetUsageLimitStatusAndActiveGrants and the team/privacy RPCs current clients call) and
 * aiserver.v1.ServerConfigService/GetServerConfig.
 */
import { randomUUID } from "node:crypto";
import type { Http2ServerRequest } from "node:http2";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, createContextKey, type HandlerContext } from "@connectrpc/connect";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
} from "../gen/agent/v1/agent_pb.js";
import { AgentService } from "../gen/agent/v1/agent_service_pb.js";
import type { GetUsableModelsResponse, NameAgentRequest } from "../gen/agent/v1/models_pb.js";
import { AiService, type AvailableModelsResponse } from "../gen/aiserver/v1/ai_service_pb.js";
import { AnalyticsService } from "../gen/aiserver/v1/analytics_pb.js";
import { type BidiAppendRequest, BidiService } from "../gen/aiserver/v1/bidi_pb.js";
import { DashboardService, LimitHitStage } from "../gen/aiserver/v1/dashboard_pb.js";
import { ClientUpdateLevel, Http2Config, ServerConfigService } from "../gen/aiserver/v1/server_config_pb.js";
import type { NodeRequest } from "./auth.js";
import { type BidiSessions, decodeAppend, requestIdOf } from "./bidi.js";
import { parseDirectives } from "./directives.js";
import type { EmulatorHttp2Config } from "./http2-config.js";
import type { RunRecorder, RunRecording } from "./record.js";
import { CENTS_PER_RUN } from "./rest.js";
import { clientVersionDate, identityKey } from "./strictness.js";
import { runTurn, type TurnDeps, type TurnTransport } from "./turn.js";
import type { InboundMessage } from "./turn-channel.js";

/** The emulator's one server configuration (a fixed UUID: the config never changes). */
const SERVER_CONFIG_VERSION = "00000000-0000-4000-8000-000000000001";

/** Which of Cursor's tools the model may use: comma-separated ToolCall case names (cursor-protocol-addendum-3.md X1). */
const ALLOWED_TOOLS_HEADER = "x-cursor-agent-allowed-tools";
/** Which of Cursor's tools the model may not use, in the same form (X1). */
const EXCLUDE_TOOLS_HEADER = "x-cursor-agent-exclude-tools";

/**
 * The headers a Run's record keeps (TurnStats.headers): the client's identity and what Cursor's SDK adds
 * (cursor-protocol-addendum-3.md X2: the per-agent blob encryption key, the original request id, the subagent
 * lineage), so a test can assert that a client sends what Cursor's clients send. Accepted whatever their value.
 */
export const RECORDED_HEADERS = [
  "x-request-id",
  "x-cursor-client-type",
  "x-cursor-client-version",
  "x-ghost-mode",
  ALLOWED_TOOLS_HEADER,
  EXCLUDE_TOOLS_HEADER,
  "x-blob-encryption-key",
  "x-original-request-id",
  "x-parent-request-id",
  "x-root-parent-request-id",
  "x-parent-agent-tool-call-id",
  "x-direct-meta-parent-child-subagent",
] as const;

function recordedHeaders(header: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of RECORDED_HEADERS) {
    const value = header.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/** The Node request behind a call, for the HTTP version and for dropping the connection. */
export const nodeRequestKey = createContextKey<NodeRequest | undefined>(undefined, { description: "node request" });

/** Dependencies of {@link registerServices}. */
export interface ServiceDeps {
  turn: TurnDeps;
  bidi: BidiSessions;
  /** Users at their usage limit (Emulator.limitUsage). */
  usageLimited?: (userId: string) => boolean;
  /** The minimum supported client version and the current build (GetServerConfig.client_version_status). */
  clientVersions?: { minimum: string; current: string };
  /** Writes every Run's messages (`emulator --record DIR`). */
  recorder?: RunRecorder;
  /** `GetServerConfig.http2_config` (`emulator --http2-config`); unset when undefined. */
  http2Config?: EmulatorHttp2Config | undefined;
}

/** The `http2_config` value of each hint name. */
const HTTP2_CONFIG_VALUES: Record<EmulatorHttp2Config, Http2Config> = {
  "force-all-disabled": Http2Config.FORCE_ALL_DISABLED,
  "force-all-enabled": Http2Config.FORCE_ALL_ENABLED,
  "force-bidi-disabled": Http2Config.FORCE_BIDI_DISABLED,
  "force-bidi-enabled": Http2Config.FORCE_BIDI_ENABLED,
};

function httpVersionOf(context: HandlerContext): "http2" | "http1" {
  const req = context.values.get(nodeRequestKey);
  return req?.httpVersionMajor === 2 ? "http2" : "http1";
}

/** Destroys the connection carrying a call: the whole HTTP/2 session, or the HTTP/1.1 socket. */
function dropperOf(context: HandlerContext): () => void {
  return () => {
    const req = context.values.get(nodeRequestKey);
    if (req === undefined) return;
    if (req.httpVersionMajor === 2) (req as Http2ServerRequest).stream.session?.destroy();
    else req.socket.destroy();
  };
}

async function* withSizes(
  requests: AsyncIterable<AgentClientMessage>,
  recording?: RunRecording,
): AsyncIterable<InboundMessage> {
  for await (const message of requests) {
    recording?.client(message);
    yield { message, size: toBinary(AgentClientMessageSchema, message).length };
  }
}

async function* recorded(
  inbound: AsyncIterable<InboundMessage>,
  recording?: RunRecording,
): AsyncIterable<InboundMessage> {
  for await (const item of inbound) {
    recording?.client(item.message);
    yield item;
  }
}

/** Passes a Run's server messages through, writing them (and the error that ends it) to its recording. */
async function* recordServer(
  messages: AsyncIterable<AgentServerMessage>,
  recording: RunRecording | undefined,
): AsyncGenerator<AgentServerMessage> {
  if (recording === undefined) {
    yield* messages;
    return;
  }
  try {
    for await (const message of messages) {
      recording.server(message);
      yield message;
    }
  } catch (error) {
    recording.error(error);
    throw error;
  } finally {
    recording.close();
  }
}

/** What a Run's turn reads from its call (Run and RunSSE alike): its client messages and the call's headers. */
function transportOf(context: HandlerContext, runId: string, inbound: AsyncIterable<InboundMessage>): TurnTransport {
  const header = context.requestHeader;
  return {
    httpVersion: httpVersionOf(context),
    inbound,
    clientSignal: context.signal,
    clientVersion: header.get("x-cursor-client-version") ?? "",
    allowedTools: header.get(ALLOWED_TOOLS_HEADER),
    excludedTools: header.get(EXCLUDE_TOOLS_HEADER),
    drop: dropperOf(context),
    runId,
    recordedHeaders: recordedHeaders(header),
  };
}

/** A chat title from the first words of the message (directives removed). */
export function nameFor(request: NameAgentRequest): string {
  const words = parseDirectives(request.userMessage).text.split(/\s+/).filter(Boolean).slice(0, 6);
  if (words.length === 0) return "New Agent";
  const title = words.join(" ").replace(/[.?!,;:]+$/, "");
  return title.charAt(0).toUpperCase() + title.slice(1);
}

/** Whether a unary request came in protobuf's binary encoding, not JSON (its answer is encoded the same way). */
function binaryRequest(context: HandlerContext): boolean {
  return !(context.requestHeader.get("content-type") ?? "").includes("json");
}

/** Registers every emulated RPC. */
export function registerServices(router: ConnectRouter, deps: ServiceDeps): void {
  const { turn, bidi } = deps;
  const catalogue = turn.models;
  // GetUsableModels' answer, built on its first request and kept (as bytes encoded at build time for a binary one,
  // which every client of this RPC asks for; building and encoding its hundred messages cold cost a start 3-5 ms).
  let usable: GetUsableModelsResponse | undefined;
  let usableBinary: GetUsableModelsResponse | undefined;
  const getUsableModels = (_request: unknown, context: HandlerContext): GetUsableModelsResponse => {
    turn.stats.countModelList("usable");
    if (binaryRequest(context)) {
      usableBinary ??= catalogue.usableBinary();
      return usableBinary;
    }
    usable ??= catalogue.usableResponse();
    return usable;
  };
  // Each AvailableModels answer is built on its first request and kept: building both (a few hundred messages) at
  // start delayed the emulator's first answer, and a client asks for one of them at most.
  let available: AvailableModelsResponse | undefined;
  let parameterised: AvailableModelsResponse | undefined;
  let parameterisedBinary: AvailableModelsResponse | undefined;
  // One client message of a RunSSE turn; Cursor's SDK lists the call on AgentService as well as on BidiService
  // (cursor-protocol-addendum-3.md X4), so both paths take it.
  const bidiAppend = (request: BidiAppendRequest, context: HandlerContext) => {
    turn.stats.countAppend();
    const requestId = requestIdOf(request.requestId?.requestId, context.requestHeader);
    bidi.append(requestId, Number(request.appendSeqno), decodeAppend(request));
    return {};
  };
  router.service(AgentService, {
    async *run(requests, context) {
      turn.stats.countRun("Run");
      const runId = context.requestHeader.get("x-request-id") || randomUUID();
      const recording = deps.recorder?.open(runId);
      yield* recordServer(runTurn(transportOf(context, runId, withSizes(requests, recording)), turn), recording);
    },
    async *runSSE(request, context) {
      turn.stats.countRun("RunSSE");
      const requestId = requestIdOf(request.requestId, context.requestHeader);
      const recording = deps.recorder?.open(requestId);
      const inbound = recorded(bidi.open(requestId), recording);
      try {
        yield* recordServer(runTurn(transportOf(context, requestId, inbound), turn), recording);
      } finally {
        bidi.end(requestId);
      }
    },
    getUsableModels,
    getDefaultModelForCli: () => ({ model: catalogue.defaultModel() }),
    nameAgent: (request) => ({ name: nameFor(request) }),
    // cursor-protocol-addendum-3.md X4 names RunPoll's fields without numbers, and Cursor's SDK uses Run (HTTP/2) or
    // RunSSE + BidiAppend (HTTP/1.1), never RunPoll: answered as a server without it (docs/protocol.md §1.2).
    // biome-ignore lint/correctness/useYield: it ends before any message
    async *runPoll() {
      throw new ConnectError(
        "agent.v1.AgentService/RunPoll is not implemented: use Run (HTTP/2) or RunSSE + BidiAppend (HTTP/1.1).",
        Code.Unimplemented,
      );
    },
    // X4 names these without numbered fields: the emulator accepts any request and answers the empty message.
    getPromptContextUsage: () => ({}),
    updateConversationMetadata: () => ({}),
    bidiAppend,
  });
  router.service(AiService, {
    getUsableModels,
    getDefaultModelForCli: () => ({ model: catalogue.defaultModel() }),
    nameAgent: (request) => ({ name: nameFor(request) }),
    availableModels: (request, context) => {
      turn.stats.countModelList("available");
      if (request.useModelParameters === true) {
        // A binary answer (every client of this RPC asks in binary) is the built-in catalogue's bytes encoded at build
        // time where they apply: encoding its 486 messages cold cost a start 20 ms of CPU.
        if (binaryRequest(context)) {
          parameterisedBinary ??= catalogue.availableBinary();
          return parameterisedBinary;
        }
        parameterised ??= catalogue.available(true);
        return parameterised;
      }
      available ??= catalogue.available();
      return available;
    },
  });
  router.service(BidiService, { bidiAppend });
  // Answered as the real service answers a user who is not in a team (cursor-protocol-addendum-2.md §9).
  const atLimit = (context: HandlerContext): boolean => {
    const identity = context.values.get(identityKey);
    return identity !== undefined && deps.usageLimited?.(identity.userId) === true;
  };
  router.service(DashboardService, {
    getCurrentPeriodUsage: (_request, context) => usageSnapshot(turn, atLimit(context)),
    getTeamReposOrEmptyIfNotInTeam: () => ({}),
    getTeamAdminSettingsOrEmptyIfNotInTeam: () => ({}),
    getUserPrivacyMode: () => ({ isEnforcedByTeam: false }),
    // cursor-protocol-addendum-3.md U2–U3: a $20 Pro plan of 2000 included cents, no hard limit.
    getPlanInfo: () => ({
      planInfo: {
        planName: "Pro",
        includedAmountCents: PLAN_LIMIT_CENTS,
        price: "$20/mo",
        billingCycleEnd: BigInt(billingCycle().end),
      },
    }),
    getHardLimit: () => ({ hardLimit: UNLIMITED_DOLLARS, noUsageBasedAllowed: false }),
    getUsageLimitStatusAndActiveGrants: (_request, context) =>
      atLimit(context)
        ? {
            isInSlowPool: false,
            errorTitle: "You've hit your usage limit",
            errorDetail: "Upgrade your plan or wait for your limit to reset.",
            limitType: "user",
            stage: LimitHitStage.HARD_BLOCK,
            resetAtMs: BigInt(billingCycle().end),
          }
        : { isInSlowPool: false, limitType: "user" },
  });
  router.service(ServerConfigService, {
    getServerConfig: (_request, context) => ({
      configVersion: SERVER_CONFIG_VERSION,
      useNlbForNal: false,
      ...(deps.http2Config === undefined ? {} : { http2Config: HTTP2_CONFIG_VALUES[deps.http2Config] }),
      ...(deps.clientVersions === undefined
        ? {}
        : {
            clientVersionStatus: versionStatus(
              deps.clientVersions,
              context.requestHeader.get("x-cursor-client-version"),
            ),
          }),
    }),
  });
  // Feature flags and event reports: the references give no fields, so the answer is the empty message.
  router.service(AnalyticsService, {
    bootstrapStatsig: () => ({}),
    trackEvents: () => ({}),
  });
}

/** The plan's included usage, in cents (cursor-protocol-addendum-3.md U2: 2000 = the $20 Pro plan). */
const PLAN_LIMIT_CENTS = 2000;
/** GetHardLimit's "unlimited" (U2). */
const UNLIMITED_DOLLARS = 2147483647;

/** The current billing cycle: this calendar month (UTC), in epoch milliseconds. */
function billingCycle(): { start: number; end: number } {
  const now = new Date();
  return {
    start: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1),
    end: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
  };
}

const percent = (part: number, whole: number): number => (whole === 0 ? 0 : (100 * part) / whole);

/**
 * Usage of the current period: 2 cents per completed turn (the REST usage's price, rest.ts), Auto's turns (model
 * `default`/`auto`) in the Auto bucket and the others in the API bucket, with U1's percentages; the whole limit for a
 * user at the usage limit (Emulator.limitUsage).
 */
function usageSnapshot(turn: TurnDeps, atLimit: boolean) {
  const completed = turn.stats.completed();
  const limit = PLAN_LIMIT_CENTS;
  const autoSpend = atLimit ? 0 : Math.min(limit, completed.auto * CENTS_PER_RUN);
  const apiSpend = atLimit ? limit : Math.min(limit - autoSpend, completed.other * CENTS_PER_RUN);
  const spend = autoSpend + apiSpend;
  const { start, end } = billingCycle();
  return {
    billingCycleStart: BigInt(start),
    billingCycleEnd: BigInt(end),
    planUsage: {
      totalSpend: spend,
      includedSpend: spend,
      bonusSpend: 0,
      remaining: limit - spend,
      limit,
      autoSpend,
      apiSpend,
      autoLimit: limit,
      apiLimit: limit,
      autoPercentUsed: percent(autoSpend, limit),
      apiPercentUsed: percent(apiSpend, limit),
      totalPercentUsed: percent(spend, limit),
    },
    spendLimitUsage: { limitType: "user" },
    displayThreshold: 50,
    enabled: true,
    displayMessage: "",
    autoBucketModels: ["default"],
  };
}

/**
 * `client_version_status` for the caller's version (cursor-protocol-addendum-3.md E13): REQUIRED below the minimum,
 * RECOMMENDED below the current build, NONE otherwise; the minimum is both the supported and the allowed one.
 */
function versionStatus(versions: { minimum: string; current: string }, version: string | null) {
  const date = clientVersionDate(version ?? "");
  const minimum = clientVersionDate(versions.minimum);
  const current = clientVersionDate(versions.current);
  const updateLevel =
    date !== undefined && minimum !== undefined && date < minimum
      ? ClientUpdateLevel.REQUIRED
      : date !== undefined && current !== undefined && date < current
        ? ClientUpdateLevel.RECOMMENDED
        : ClientUpdateLevel.NONE;
  return {
    updateLevel,
    currentClientVersion: versions.current,
    minSupportedClientVersion: versions.minimum,
    minAllowedClientVersion: versions.minimum,
    message: updateLevel === ClientUpdateLevel.REQUIRED ? "Your version of Cursor is no longer supported." : "",
  };
}
