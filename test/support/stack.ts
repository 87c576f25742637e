/**
 * A full cursor-bridge stack for integration tests and benchmarks: the emulator on a port-0 loopback listener, the
 * real protocol client, the bridge wired by the same factory `serve` uses (src/server/wiring.ts) on memory stores,
 * and a port-0 HTTP listener. Everything closes in close().
 */
import { randomUUID } from "node:crypto";
import type { AgentClient } from "../../src/backend/types.js";
import { type Emulator, type EmulatorOptions, startEmulator } from "../../src/emulator/index.js";
import type { BridgeEngine } from "../../src/engine/index.js";
import { type CursorApi, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import type { AppGateway } from "../../src/server/app.js";
import { listen, type RunningServer } from "../../src/server/listen.js";
import { wireBridge } from "../../src/server/wiring.js";
import { createMemoryConversationIndex } from "../../src/stores/memory/conversation-index.js";
import { createMemoryConversationStore } from "../../src/stores/memory/conversation-store.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import type { ConversationIndex } from "../../src/stores/types.js";
import type { AppDeps, AppOptions } from "../../src/surfaces/kit/deps.js";
import { createLogger, type Logger, silentLogger } from "../../src/util/logger.js";

/** Options of {@link startStack}. */
export interface StackOptions {
  emulator?: EmulatorOptions;
  /** Reuse an emulator (e.g. to restart the bridge against the same upstream). */
  existingEmulator?: Emulator;
  app?: Partial<AppOptions>;
  /** The team gateway's parts (key check and admin API from src/gateway/createGateway, admin key, key spend), as serve wires them. */
  gateway?: AppGateway;
  transport?: "auto" | "http2" | "http1";
  stallTimeoutMs?: number;
  parkedTurnTtlMs?: number;
  /** Body timeout of the HTTP listener (ms). */
  bodyTimeoutMs?: number;
  /** Collect log lines here (redacted, as in production). */
  logLines?: string[];
  /** The engine's conversation index. @default in memory */
  conversationIndex?: ConversationIndex;
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
  api: CursorApi;
  agentClient: AgentClient;
  engine: BridgeEngine;
  /** Parked turns right now; closeAll closes them (and flushes the engine's index). */
  parked: { size(): number; closeAll(): Promise<void> };
  close(): Promise<void>;
}

/** Starts emulator + bridge. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const emulator =
    options.existingEmulator ?? (await startEmulator({ port: 0, heartbeatIntervalMs: 200, ...options.emulator }));
  const lines = options.logLines;
  const logger: Logger = lines ? createLogger({ level: "debug", sink: (l) => lines.push(l) }) : silentLogger;
  const token = { value: emulator.issueTokens().accessToken };
  const tokenSource = {
    getAccessToken: async () => token.value,
    refreshAfterUnauthenticated: async () => {
      token.value = emulator.issueTokens().accessToken;
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
  const { agentClient, engine, app } = wireBridge({
    api,
    tokenSource,
    stores: {
      conversations: createMemoryConversationStore(),
      index: options.conversationIndex ?? createMemoryConversationIndex(),
      responses: createMemoryResponseStore(),
    },
    logger,
    agent: { stallTimeoutMs: options.stallTimeoutMs ?? 15_000 },
    engine: { parkedTurnTtlMs: options.parkedTurnTtlMs ?? 60_000 },
    app: {
      options: {
        apiKey: undefined,
        corsOrigins: [],
        maxBodyBytes: 4 * 1024 * 1024,
        reasoningOutput: "reasoning_content",
        upstream: "emulator",
        loggedIn: false,
        version: "test",
        ...options.app,
      },
      now: Date.now,
      newId: () => randomUUID().replaceAll("-", ""),
      ...(options.limits === undefined ? {} : { limits: options.limits }),
      ...(options.status === undefined ? {} : { status: options.status }),
    },
    gateway: options.gateway,
  });
  const server = await listen(app, {
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
    agentClient,
    engine,
    parked: { size: () => engine.parkedCount(), closeAll: () => engine.closeAll() },
    close: async () => {
      await server.close();
      await engine.closeAll();
      api.close();
      if (!options.existingEmulator) await emulator.close();
    },
  };
}
