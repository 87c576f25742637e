/**
 * The engine and the HTTP app, put together on an agent client that is already built (wiring.ts builds it; `serve`
 * passes a deferred one, backend/deferred-client.ts, so it answers before the protocol code has loaded). Nothing
 * here imports protocol code.
 */
import type { AgentClient } from "../backend/types.js";
import {
  accountIndex,
  type BridgeEngine,
  createAccountRouter,
  createEngine,
  type EngineOptions,
} from "../engine/index.js";
import {
  type ConversationIndex,
  type ConversationStore,
  DEFAULT_ACCOUNT,
  type ResponseStore,
} from "../stores/types.js";
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

/** One agent client per named Cursor account (issue #29), and the account requests without one run on. */
export interface AccountClients {
  defaultAccount: string;
  clients: ReadonlyMap<string, AgentClient>;
}

/** The edges {@link wireEnginesOn} needs besides the agent clients. */
type EngineEdges = { stores: Pick<BridgeStores, "index">; logger: Logger; engine?: AppWiring["engine"] };

/**
 * One engine per account on its agent client, and the router in front of them that the surfaces see
 * (engine/accounts.ts): a turn runs on its key's account and never another. The accounts share the index, each under
 * its own prefix, so no conversation is continued under another account. One account keeps the log lines it always
 * had; several name theirs.
 */
export function wireEnginesOn(accounts: AccountClients, wiring: EngineEdges): BridgeEngine {
  const named = accounts.clients.size > 1 || !accounts.clients.has(DEFAULT_ACCOUNT);
  const engines = new Map<string, BridgeEngine>();
  for (const [name, agentClient] of accounts.clients) {
    engines.set(
      name,
      createEngine({
        ...wiring.engine,
        agentClient,
        index: accountIndex(wiring.stores.index, name),
        logger: wiring.logger.child(named ? { component: "engine", account: name } : { component: "engine" }),
      }),
    );
  }
  return createAccountRouter({ engines, defaultAccount: accounts.defaultAccount, index: wiring.stores.index });
}

/** The engine on one agent client: the default account's. */
export function wireEngineOn(agentClient: AgentClient, wiring: EngineEdges): BridgeEngine {
  return wireEnginesOn({ defaultAccount: DEFAULT_ACCOUNT, clients: new Map([[DEFAULT_ACCOUNT, agentClient]]) }, wiring);
}

/**
 * Builds the engine (one per account behind the router) and the app on the agent client(s); expired stored responses
 * are removed in the background.
 */
export function wireApp(agentClients: AgentClient | AccountClients, wiring: AppWiring): WiredApp {
  const engine = "clients" in agentClients ? wireEnginesOn(agentClients, wiring) : wireEngineOn(agentClients, wiring);
  return { engine, app: wireAppOn(engine, wiring) };
}

/** The app on an engine already built; expired stored responses are removed in the background. */
export function wireAppOn(engine: BridgeEngine, wiring: AppWiring): WiredApp["app"] {
  const { logger, stores } = wiring;
  // A revoked or expired key's parked turns hold open Runs nobody may resume any more: closed at once.
  wiring.gateway?.onOwnerGone?.((owner, reason) => {
    engine
      .releaseOwned?.(owner, reason)
      .catch((error: unknown) =>
        logger.child({ component: "engine" }).warn("Could not close the parked turns of a gone key", { error }),
      );
  });
  stores.responses
    .deleteExpired()
    .catch((error: unknown) =>
      logger.child({ component: "engine" }).warn("Could not remove expired stored responses", { error }),
    );
  return createApp(
    {
      ...wiring.app,
      engine,
      responseStore: stores.responses,
      logger: logger.child({ component: "http" }),
    },
    wiring.gateway,
  );
}
