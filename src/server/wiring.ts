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
import {
  accountIndex,
  type BridgeEngine,
  createAccountRouter,
  createEngine,
  type EngineOptions,
} from "../engine/index.js";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import {
  type ConversationIndex,
  type ConversationStore,
  DEFAULT_ACCOUNT,
  type ResponseStore,
} from "../stores/types.js";
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

/** One Cursor account's edges: the API its turns run against and the tokens it runs on. */
export interface AccountUpstream {
  /** Its getAccessToken should be `tokenSource`'s. */
  api: CursorApi;
  tokenSource: TokenSource;
}

/** Named Cursor accounts (issue #29): one agent client and engine each, chosen per turn by `EngineRequest.account`. */
export interface AccountsWiring {
  /** The account requests without one run on; it may be missing from `upstreams` (such requests then fail). */
  defaultAccount: string;
  /** Every logged-in account, by name. */
  upstreams: ReadonlyMap<string, AccountUpstream>;
}

/** The edges and settings of {@link wireEngine}, besides the upstream. */
interface EngineWiringBase {
  stores: Omit<BridgeStores, "responses">;
  /** The root logger; the agent client and engine log under `component=agent|engine`. */
  logger: Logger;
  /** Agent client settings besides its edges. */
  agent?: Omit<AgentClientOptions, "api" | "tokenSource" | "conversationStore" | "logger">;
  /** Engine settings besides its edges. */
  engine?: Omit<EngineOptions, "agentClient" | "index" | "logger">;
}

/**
 * The edges and settings of {@link wireEngine}: one upstream (`api` + `tokenSource`: the account `default`, as one
 * cursor-bridge always ran), or several named `accounts`.
 */
export type EngineWiring = EngineWiringBase &
  (
    | { api: CursorApi; tokenSource: TokenSource; accounts?: undefined }
    | { accounts: AccountsWiring; api?: undefined; tokenSource?: undefined }
  );

/** The edges and settings of {@link wireBridge}. */
export type BridgeWiring = EngineWiring & {
  stores: BridgeStores;
  /** App settings besides its edges. */
  app: Omit<AppDeps, "engine" | "responseStore" | "logger">;
  /** The team gateway's key check, admin API and metrics settings (src/gateway/); without it the single `--api-key` check. */
  gateway?: AppGateway | undefined;
};

/** A wired engine: what a surface without the HTTP app (ACP) runs on. */
export interface WiredEngine {
  /** The default account's agent client (or the first account's when the default is not logged in). */
  agentClient: AgentClient;
  /** Every account's agent client, by name. */
  agentClients: ReadonlyMap<string, AgentClient>;
  /** Dispatches each turn to its account's engine (engine/accounts.ts). */
  engine: BridgeEngine;
}

/** A wired bridge: the app to serve, and what the caller closes or inspects. */
export interface WiredBridge extends WiredEngine {
  app: ReturnType<typeof createApp>;
}

/**
 * Builds one agent client and engine per account on the given edges and the router in front of them (`serve`, the
 * test stack and `acp` share it). The accounts share the stores; each sees the conversation index under its own
 * prefix (engine/accounts.ts), so no conversation is continued under another account.
 */
export function wireEngine(wiring: EngineWiring): WiredEngine {
  const { logger, stores } = wiring;
  const accounts: AccountsWiring =
    wiring.accounts ??
    ({
      defaultAccount: DEFAULT_ACCOUNT,
      upstreams: new Map([[DEFAULT_ACCOUNT, { api: wiring.api, tokenSource: wiring.tokenSource }]]),
    } satisfies AccountsWiring);
  // One account keeps the log lines it always had; several name theirs.
  const named = wiring.accounts !== undefined;
  const agentClients = new Map<string, AgentClient>();
  const engines = new Map<string, BridgeEngine>();
  for (const [name, upstream] of accounts.upstreams) {
    const agentClient = createAgentClient({
      ...wiring.agent,
      api: upstream.api,
      tokenSource: upstream.tokenSource,
      conversationStore: stores.conversations,
      logger: logger.child(named ? { component: "agent", account: name } : { component: "agent" }),
    });
    agentClients.set(name, agentClient);
    engines.set(
      name,
      createEngine({
        ...wiring.engine,
        agentClient,
        index: accountIndex(stores.index, name),
        logger: logger.child(named ? { component: "engine", account: name } : { component: "engine" }),
      }),
    );
  }
  const first = agentClients.get(accounts.defaultAccount) ?? agentClients.values().next().value;
  if (first === undefined) throw new Error("wireEngine needs at least one account");
  const engine = createAccountRouter({ engines, defaultAccount: accounts.defaultAccount, index: stores.index });
  return { agentClient: first, agentClients, engine };
}

/** Builds agent clients, engines and app on the given edges; expired stored responses are removed in the background. */
export function wireBridge(wiring: BridgeWiring): WiredBridge {
  const { logger, stores } = wiring;
  const wired = wireEngine(wiring);
  stores.responses
    .deleteExpired()
    .catch((error: unknown) =>
      logger.child({ component: "engine" }).warn("Could not remove expired stored responses", { error }),
    );
  const app = createApp(
    {
      ...wiring.app,
      engine: wired.engine,
      responseStore: stores.responses,
      logger: logger.child({ component: "http" }),
    },
    wiring.gateway,
  );
  return { ...wired, app };
}
