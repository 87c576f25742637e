/**
 * The engine and the HTTP app, put together on an agent client that is already built (wiring.ts builds it; `serve`
 * passes a deferred one, backend/deferred-client.ts, so it answers before the protocol code has loaded). Nothing
 * here imports protocol code.
 */
import type { AgentClient } from "../backend/types.js";
import { type BridgeEngine, createEngine, type EngineOptions } from "../engine/index.js";
import type { ConversationIndex, ConversationStore, ResponseStore } from "../stores/types.js";
import type { AppDeps } from "../surfaces/kit/deps.js";
import type { Logger } from "../util/logger.js";
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

/** The edges and settings of {@link wireApp} besides the agent client. */
export interface AppWiring {
  stores: BridgeStores;
  /** The root logger; the engine and the app log under `component=engine|http`. */
  logger: Logger;
  /** Engine settings besides its edges. */
  engine?: Omit<EngineOptions, "agentClient" | "index" | "logger">;
  /** App settings besides its edges. */
  app: Omit<AppDeps, "engine" | "responseStore" | "logger">;
  /** The team gateway's key check, admin API and metrics settings (src/gateway/); without it the single `--api-key` check. */
  gateway?: AppGateway | undefined;
}

/** A wired app and the engine under it. */
export interface WiredApp {
  engine: BridgeEngine;
  app: ReturnType<typeof createApp>;
}

/** The engine on `agentClient` and the given index. */
export function wireEngineOn(
  agentClient: AgentClient,
  wiring: { stores: Pick<BridgeStores, "index">; logger: Logger; engine?: AppWiring["engine"] },
): BridgeEngine {
  return createEngine({
    ...wiring.engine,
    agentClient,
    index: wiring.stores.index,
    logger: wiring.logger.child({ component: "engine" }),
  });
}

/** Builds the engine and the app on `agentClient`; expired stored responses are removed in the background. */
export function wireApp(agentClient: AgentClient, wiring: AppWiring): WiredApp {
  const { logger, stores } = wiring;
  const engine = wireEngineOn(agentClient, wiring);
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
  return { engine, app };
}
