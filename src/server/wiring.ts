/**
 * The one place the bridge is put together from its edges: the agent client on a Cursor API (the real service or
 * the emulator) and a conversation store, the engine on that client and a conversation index, the HTTP app on the
 * engine and a response store. `serve` (cli/serve-runtime.ts) and the test stack (test/support/stack.ts) both build
 * through {@link wireBridge} (and `cursor-bridge acp` through {@link wireEngine}, the same without the app), so what
 * the tests run is what users run; only the edges differ (file or Redis stores
 * and the chosen upstream in serve, memory stores and a port-0 emulator in the tests).
 */
import { type AgentClientOptions, createAgentClient } from "../backend/index.js";
import type { AgentClient } from "../backend/types.js";
import { type BridgeEngine, createEngine, type EngineOptions } from "../engine/index.js";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { ConversationIndex, ConversationStore, ResponseStore } from "../stores/types.js";
import type { AppDeps } from "../surfaces/kit/deps.js";
import type { Logger } from "../util/logger.js";
import type { TokenSource } from "../util/token-source.js";
import { type AppGateway, createApp } from "./app.js";

/** The stores one bridge runs on (all from src/stores/: memory, file or Redis). */
export interface BridgeStores {
  /** The agent client's conversations (checkpoint + blobs). */
  conversations: ConversationStore;
  /** The engine's history key → conversation id index. */
  index: ConversationIndex;
  /** Stored `/v1/responses`. */
  responses: ResponseStore;
}

/** The edges and settings of {@link wireEngine}: everything but the HTTP app. */
export interface EngineWiring {
  /** The Cursor API the turns run against; its getAccessToken should be `tokenSource`'s. */
  api: CursorApi;
  tokenSource: TokenSource;
  stores: Omit<BridgeStores, "responses">;
  /** The root logger; the agent client and engine log under `component=agent|engine`. */
  logger: Logger;
  /** Agent client settings besides its edges. */
  agent?: Omit<AgentClientOptions, "api" | "tokenSource" | "conversationStore" | "logger">;
  /** Engine settings besides its edges. */
  engine?: Omit<EngineOptions, "agentClient" | "index" | "logger">;
}

/** The edges and settings of {@link wireBridge}. */
export interface BridgeWiring extends EngineWiring {
  stores: BridgeStores;
  /** App settings besides its edges. */
  app: Omit<AppDeps, "engine" | "responseStore" | "logger">;
  /** The team gateway's key check, admin API and metrics settings (src/gateway/); without it the single `--api-key` check. */
  gateway?: AppGateway | undefined;
}

/** A wired engine: what a surface without the HTTP app (ACP) runs on. */
export interface WiredEngine {
  agentClient: AgentClient;
  engine: BridgeEngine;
}

/** A wired bridge: the app to serve, and what the caller closes or inspects. */
export interface WiredBridge extends WiredEngine {
  app: ReturnType<typeof createApp>;
}

/** Builds the agent client and the engine on the given edges (`serve`, the test stack and `acp` share it). */
export function wireEngine(wiring: EngineWiring): WiredEngine {
  const { logger, stores } = wiring;
  const agentClient = createAgentClient({
    ...wiring.agent,
    api: wiring.api,
    tokenSource: wiring.tokenSource,
    conversationStore: stores.conversations,
    logger: logger.child({ component: "agent" }),
  });
  const engine = createEngine({
    ...wiring.engine,
    agentClient,
    index: stores.index,
    logger: logger.child({ component: "engine" }),
  });
  return { agentClient, engine };
}

/** Builds agent client, engine and app on the given edges; expired stored responses are removed in the background. */
export function wireBridge(wiring: BridgeWiring): WiredBridge {
  const { logger, stores } = wiring;
  const { agentClient, engine } = wireEngine(wiring);
  stores.responses
    .deleteExpired()
    .catch((error: unknown) =>
      logger.child({ component: "engine" }).warn("Could not remove expired stored responses", { error }),
    );
  const app = createApp(
    {
      ...wiring.app,
      engine,
      responseStore: stores.responses,
      logger: logger.child({ component: "http" }),
    },
    wiring.gateway,
  );
  return { agentClient, engine, app };
}
