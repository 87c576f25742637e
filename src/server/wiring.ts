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
import { DEFAULT_ACCOUNT } from "../stores/types.js";
import type { Logger } from "../util/logger.js";
import type { TokenSource } from "../util/token-source.js";
import { type AppWiring, type BridgeStores, type WiredApp, wireAppOn, wireEnginesOn } from "./app-wiring.js";

export type { AppWiring, BridgeStores, WiredApp } from "./app-wiring.js";

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
export type BridgeWiring = EngineWiring & AppWiring & { stores: BridgeStores };

/** The edges of one account's agent client ({@link wireAgentClient}). */
export interface AgentClientWiring extends AccountUpstream {
  stores: Pick<BridgeStores, "conversations">;
  logger: Logger;
  agent?: EngineWiringBase["agent"];
  /** Named in its log lines when several accounts are served. */
  account?: string | undefined;
}

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
export interface WiredBridge extends WiredEngine, WiredApp {}

/** Builds the agent client on the given edges (what {@link wireEngine} and {@link wireBridge} run on). */
export function wireAgentClient(wiring: AgentClientWiring): AgentClient {
  return createAgentClient({
    ...wiring.agent,
    api: wiring.api,
    tokenSource: wiring.tokenSource,
    conversationStore: wiring.stores.conversations,
    logger: wiring.logger.child(
      wiring.account === undefined ? { component: "agent" } : { component: "agent", account: wiring.account },
    ),
  });
}

/**
 * Builds one agent client and engine per account on the given edges and the router in front of them (`serve`, the
 * test stack and `acp` share it). The accounts share the stores; each sees the conversation index under its own
 * prefix (engine/accounts.ts), so no conversation is continued under another account.
 */
export function wireEngine(wiring: EngineWiring): WiredEngine {
  const accounts: AccountsWiring =
    wiring.accounts ??
    ({
      defaultAccount: DEFAULT_ACCOUNT,
      upstreams: new Map([[DEFAULT_ACCOUNT, { api: wiring.api, tokenSource: wiring.tokenSource }]]),
    } satisfies AccountsWiring);
  // One account keeps the log lines it always had; several name theirs.
  const named = wiring.accounts !== undefined;
  const agentClients = new Map<string, AgentClient>();
  for (const [name, upstream] of accounts.upstreams) {
    agentClients.set(
      name,
      wireAgentClient({
        api: upstream.api,
        tokenSource: upstream.tokenSource,
        stores: wiring.stores,
        logger: wiring.logger,
        agent: wiring.agent,
        account: named ? name : undefined,
      }),
    );
  }
  const first = agentClients.get(accounts.defaultAccount) ?? agentClients.values().next().value;
  if (first === undefined) throw new Error("wireEngine needs at least one account");
  const engine = wireEnginesOn({ defaultAccount: accounts.defaultAccount, clients: agentClients }, wiring);
  return { agentClient: first, agentClients, engine };
}

/** Builds agent clients, engines and app on the given edges; expired stored responses are removed in the background. */
export function wireBridge(wiring: BridgeWiring): WiredBridge {
  const wired = wireEngine(wiring);
  return { ...wired, app: wireAppOn(wired.engine, wiring) };
}
