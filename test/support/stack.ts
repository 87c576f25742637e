/**
 * A full cursor-bridge stack for integration tests and benchmarks: the emulator on a port-0 loopback listener, the
 * real protocol client, the bridge wired by the same factory `serve` uses (src/server/wiring.ts) on memory stores,
 * and a port-0 HTTP listener. Everything closes in close().
 */
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { AgentClient } from "../../src/backend/types.js";
import { planUsageOf } from "../../src/cli/usage.js";
import { type Emulator, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import type { BridgeEngine } from "../../src/engine/index.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import type { AppGateway } from "../../src/server/app.js";
import { listen, type RunningServer } from "../../src/server/listen.js";
import { type AccountUpstream, wireBridge } from "../../src/server/wiring.js";
import { createMemoryConversationIndex } from "../../src/stores/memory/conversation-index.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import type { ConversationIndex, ResponseStore } from "../../src/stores/types.js";
import type { AppEnv } from "../../src/surfaces/kit/access-log.js";
import type { AppDeps, AppOptions } from "../../src/surfaces/kit/deps.js";
import { createLogger, type Logger, silentLogger } from "../../src/util/logger.js";
import { testAppOptions } from "./app-options.js";

/** Options of {@link startStack}. */
export interface StackOptions {
  emulator?: EmulatorOptions;
  /** `--cursor-tools` (native: no x-cursor-agent-allowed-tools header). @default "client" */
  cursorTools?: "client" | "native";
  /** Reuse an emulator (e.g. to restart the bridge against the same upstream). */
  existingEmulator?: Emulator;
  app?: Partial<AppOptions>;
  /** The team gateway's parts (key check and admin API from src/gateway/createGateway, admin key, key spend), as serve wires them. */
  gateway?: AppGateway;
  transport?: "auto" | "http2" | "http1";
  stallTimeoutMs?: number;
  /** How long Cursor may be idle while a step's listed calls are missing (AgentClientOptions). @default 3000 */
  listedCallsIdleMs?: number;
  /** How long closing a turn waits for Cursor to end its Run after the cancel (AgentClientOptions). @default 250 */
  cancelGraceMs?: number;
  parkedTurnTtlMs?: number;
  /** Body timeout of the HTTP listener (ms). */
  bodyTimeoutMs?: number;
  /** Collect log lines here (redacted, as in production). */
  logLines?: string[];
  /** The engine's conversation index. @default in memory */
  conversationIndex?: ConversationIndex;
  /** The stored responses (shared with `acp`'s sessions in `serve`). @default in memory */
  responseStore?: ResponseStore;
  /**
   * Named Cursor accounts (issue #29): each gets its own emulator tokens for the identity given, and a request's
   * `x-test-account` header stands for a virtual key bound to that account (a principal set by a test middleware,
   * as the gateway's key check sets it). @default one account, `default`
   */
  accounts?: Readonly<Record<string, { userId: string; email?: string }>>;
  /** The account requests without one run on. @default "default" */
  defaultAccount?: string;
  /** The team gateway's limits middleware (AppDeps.limits). @default none */
  limits?: AppDeps["limits"];
  /** What the status page shows besides the engine's state (AppDeps.status). @default none */
  status?: AppDeps["status"];
}

/** A running stack. */
export interface Stack {
  emulator: Emulator;
  server: RunningServer;
  /** `${server.url}/v1` */
  baseURL: string;
  /** The default account's API (the first account's when the default has none). */
  api: CursorApi;
  /** Every account's API, by name. */
  apis: ReadonlyMap<string, CursorApi>;
  agentClient: AgentClient;
  engine: BridgeEngine;
  /** Parked turns right now; closeAll closes them (and flushes the engine's index). */
  parked: { size(): number; closeAll(): Promise<void> };
  close(): Promise<void>;
}

/**
 * The app behind a test middleware that sets the principal a virtual key would carry: `x-test-account: NAME` binds
 * the request to that account (what the gateway's key check does for a key created with `--account NAME`).
 */
function withTestPrincipal(app: Hono<AppEnv>): Hono<AppEnv> {
  const outer = new Hono<AppEnv>();
  outer.use(async (c, next) => {
    const account = c.req.header("x-test-account");
    if (account !== undefined) {
      c.set("principal", {
        // `x-test-key: ID` names another virtual key bound to the same account.
        keyId: c.req.header("x-test-key") ?? `key-${account}`,
        keyName: `key of ${account}`,
        account,
        limits: {},
        checkModel: () => {},
      });
    }
    await next();
  });
  outer.route("/", app);
  return outer;
}

/** Starts emulator + bridge. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const emulator =
    options.existingEmulator ?? (await startEmulator({ port: 0, heartbeatIntervalMs: 200, ...options.emulator }));
  const lines = options.logLines;
  const logger: Logger = lines ? createLogger({ level: "debug", sink: (l) => lines.push(l) }) : silentLogger;
  const upstreamFor = (identity?: { userId: string; email?: string }): AccountUpstream => {
    const token = { value: emulator.issueTokens(identity).accessToken };
    const tokenSource = {
      getAccessToken: async () => token.value,
      refreshAfterUnauthenticated: async () => {
        token.value = emulator.issueTokens(identity).accessToken;
        return token.value;
      },
    };
    const api = createCursorApi({
      agentUrl: emulator.url,
      apiUrl: emulator.url,
      getAccessToken: () => tokenSource.getAccessToken(),
      clientVersion: "cli-2026.01.17-d239e66",
      transport: options.transport ?? "http2",
      logger,
    });
    return { api, tokenSource };
  };
  const named = options.accounts;
  const upstreams = new Map<string, AccountUpstream>(
    named === undefined
      ? [["default", upstreamFor()]]
      : Object.entries(named).map(([name, identity]) => [name, upstreamFor(identity)]),
  );
  const defaultAccount = options.defaultAccount ?? "default";
  const only = upstreams.get("default");
  // Without named accounts the bridge is wired as `serve` wires one login (its log lines name no account).
  const upstream =
    named === undefined && only !== undefined
      ? { api: only.api, tokenSource: only.tokenSource }
      : { accounts: { defaultAccount, upstreams } };
  const { agentClient, engine, app } = wireBridge({
    ...upstream,
    stores: {
      conversations: createMemoryConversationStore(),
      index: options.conversationIndex ?? createMemoryConversationIndex(),
      responses: options.responseStore ?? createMemoryResponseStore(),
    },
    logger,
    agent: {
      stallTimeoutMs: options.stallTimeoutMs ?? 15_000,
      ...(options.cancelGraceMs === undefined ? {} : { cancelGraceMs: options.cancelGraceMs }),
      ...(options.listedCallsIdleMs === undefined ? {} : { listedCallsIdleMs: options.listedCallsIdleMs }),
    },
    engine: {
      parkedTurnTtlMs: options.parkedTurnTtlMs ?? 60_000,
      ...(options.cursorTools === undefined ? {} : { cursorTools: options.cursorTools }),
    },
    app: {
      options: testAppOptions(options.app),
      now: Date.now,
      newId: () => randomUUID().replaceAll("-", ""),
      ...(named === undefined
        ? options.status === undefined
          ? {}
          : { status: options.status }
        : {
            status: {
              ...options.status,
              accounts: [...upstreams].map(([name, { api }]) => ({
                name,
                default: name === defaultAccount,
                who: named[name]?.email ?? named[name]?.userId,
                usage: async (signal: AbortSignal) => planUsageOf(await api.getCurrentPeriodUsage(signal)),
              })),
            },
          }),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    },
    gateway: options.gateway,
  });
  const served = named === undefined ? app : withTestPrincipal(app);
  const apis = new Map([...upstreams].map(([name, upstream]) => [name, upstream.api]));
  const api = apis.get(defaultAccount) ?? [...apis.values()][0];
  if (api === undefined) throw new Error("startStack needs at least one account");
  const server = await listen(served, {
    host: "127.0.0.1",
    port: 0,
    apiKey: options.app?.apiKey,
    ...(options.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: options.bodyTimeoutMs }),
  });
  return {
    emulator,
    server,
    baseURL: `${server.url}/v1`,
    api,
    apis,
    agentClient,
    engine,
    parked: { size: () => engine.parkedCount(), closeAll: () => engine.closeAll() },
    close: async () => {
      await server.close();
      await engine.closeAll();
      for (const each of apis.values()) each.close();
      if (!options.existingEmulator) await emulator.close();
    },
  };
}
