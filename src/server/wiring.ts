/**
 * The one place the bridge is put together from its edges: the agent client on a Cursor API (the real service or
 * the emulator) and a conversation store, the engine on that client and a conversation index, the HTTP app on the
 * engine and a response store. `serve` (cli/serve-runtime.ts) and the test stack (test/support/stack.ts) both build
 * through {@link wireBridge} (and `cursor-bridge acp` through {@link wireEngine}, the same without the app), so what
 * the tests run is what users run; only the edges differ (file or Redis stores
 * and the chosen upstream in serve, memory stores and a port-0 emulator in the tests). The engine and the app are put
 * together in app-wiring.ts, which loads no protocol code: `serve` wires them on a deferred agent client and builds
 * the real one here once it serves.
 */
import { type AgentClientOptions, createAgentClient } from "../backend/index.js";
import type { AgentClient } from "../backend/types.js";
import type { BridgeEngine, EngineOptions } from "../engine/index.js";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { Logger } from "../util/logger.js";
import type { TokenSource } from "../util/token-source.js";
import { type AppWiring, type BridgeStores, type WiredApp, wireApp, wireEngineOn } from "./app-wiring.js";

export type { AppWiring, BridgeStores, WiredApp } from "./app-wiring.js";

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
export interface BridgeWiring extends EngineWiring, AppWiring {
  stores: BridgeStores;
}

/** A wired engine: what a surface without the HTTP app (ACP) runs on. */
export interface WiredEngine {
  agentClient: AgentClient;
  engine: BridgeEngine;
}

/** A wired bridge: the app to serve, and what the caller closes or inspects. */
export interface WiredBridge extends WiredEngine, WiredApp {}

/** Builds the agent client on the given edges (what {@link wireEngine} and {@link wireBridge} run on). */
export function wireAgentClient(wiring: Omit<EngineWiring, "engine">): AgentClient {
  return createAgentClient({
    ...wiring.agent,
    api: wiring.api,
    tokenSource: wiring.tokenSource,
    conversationStore: wiring.stores.conversations,
    logger: wiring.logger.child({ component: "agent" }),
  });
}

/** Builds the agent client and the engine on the given edges (`serve`, the test stack and `acp` share it). */
export function wireEngine(wiring: EngineWiring): WiredEngine {
  const agentClient = wireAgentClient(wiring);
  return { agentClient, engine: wireEngineOn(agentClient, wiring) };
}

/** Builds agent client, engine and app on the given edges; expired stored responses are removed in the background. */
export function wireBridge(wiring: BridgeWiring): WiredBridge {
  const agentClient = wireAgentClient(wiring);
  return { agentClient, ...wireApp(agentClient, wiring) };
}
