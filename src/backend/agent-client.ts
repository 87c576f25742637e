/**
 * The agent client façade: `startTurn()` runs turns against Cursor's agent API (or the emulator) and
 * `listModels()` lists models. Every edge is injected; defaults for the rest are built here, in one place.
 */
import { randomUUID } from "node:crypto";
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { ConversationStore } from "../stores/types.js";
import { type Logger, silentLogger } from "../util/logger.js";
import { CursorAgentTurn } from "./agent-turn.js";
import { createModelCatalog, DEFAULT_MODELS_CACHE_TTL_MS } from "./models.js";
import { DEFAULT_LISTED_CALLS_IDLE_MS } from "./step-pause.js";
import { createToolListCache, type ToolListCache } from "./tool-list-cache.js";
import type { TurnDependencies } from "./turn-dependencies.js";
import type { AgentClient, AgentTurn, TokenSource, TurnRequest } from "./types.js";
import { defaultWorkspaceEnvironment, type WorkspaceEnvironment } from "./workspace-environment.js";

/**
 * The batch window's default: how long a segment waits for more of a step's tool calls when Cursor did not say how
 * many it makes (docs/protocol.md §4.6).
 */
export const DEFAULT_TOOL_BATCH_WINDOW_MS = 40;

/** Options of {@link createAgentClient}. */
export interface AgentClientOptions {
  /** The Cursor API (its getAccessToken should be the tokenSource's). */
  api: CursorApi;
  /** Used to refresh once after `unauthenticated`. */
  tokenSource: TokenSource;
  /** Image-input overrides (`id` accepts images, `-id` does not). @default [] */
  visionModels?: readonly string[];
  /** Where conversations (checkpoint + blobs) live: one of src/stores/, chosen by the composition root. */
  conversationStore: ConversationStore;
  /** @default Date.now */
  now?: () => number;
  /** Ids for user messages and fallback tool-call ids. @default crypto.randomUUID */
  newId?: () => string;
  /** @default silentLogger */
  logger?: Logger;
  /** Appended to every tool-call id handed out: the instance tag when several instances share a store. @default "" */
  toolCallIdSuffix?: string;
  /** Interns the turns' tool lists (tests observe it). @default createToolListCache() */
  toolLists?: ToolListCache;
  /** What the server is told about the workspace. @default defaultWorkspaceEnvironment() */
  environment?: WorkspaceEnvironment;
  /** `client_heartbeat` interval (§4.2). @default 5000 */
  heartbeatIntervalMs?: number;
  /** No real progress (heartbeats do not count) for this long while output is awaited → timeout. @default 120000 */
  stallTimeoutMs?: number;
  /**
   * How long to wait for more parallel tool calls before pausing the segment, when Cursor did not say how many the
   * step makes (`call_count`: then no window runs). The server sends the exec requests of one model response back to
   * back, so a short quiet window catches all of them (FIN batches within 30 ms, §5.4) while adding almost no
   * latency. @default 40
   */
  toolBatchWindowMs?: number;
  /**
   * While fewer of a step's parallel calls than `call_count` said have come, how long Cursor may make no progress
   * (heartbeats do not count) before the calls that came are handed out instead of waiting for the stall timeout.
   * Cursor streams a call as it forms it (partial tool calls, argument deltas, tokens), so seconds of silence mean the
   * count will not be met; any progress restarts the wait, so calls far apart still make one message. @default 3000
   */
  listedCallsIdleMs?: number;
  /**
   * Retries of connection loss before any output, each on a fresh connection of the turn's own: exponential backoff
   * from baseDelayMs. @default {attempts:1, baseDelayMs:250}
   */
  retry?: { attempts: number; baseDelayMs: number };
  /** Lifetime of the cached model list. @default 300000 */
  modelsCacheTtlMs?: number;
  /** Grace for the server to end after `cancel_action` before the stream is torn down. @default 250 */
  cancelGraceMs?: number;
  /** How long to wait for end-of-stream after `turn_ended`. @default 5000 */
  drainTimeoutMs?: number;
  /**
   * Called when Cursor refuses the client version as outdated before any output: true when a newer version is in use
   * now (protocol/cursor/client-version-heal.ts), and the turn is retried once. @default none (the error stands)
   */
  renewClientVersion?: () => Promise<boolean>;
}

/** Default of {@link AgentClientOptions.stallTimeoutMs} (the official CLI uses 10 s; models may think longer). */
export const DEFAULT_STALL_TIMEOUT_MS = 120_000;

/** Creates the agent client. */
export function createAgentClient(options: AgentClientOptions): AgentClient {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const store = options.conversationStore;
  const catalog = createModelCatalog({
    fetch: (signal) => options.api.getUsableModels(signal),
    ...(options.api.availableModels === undefined
      ? {}
      : { fetchAvailable: (signal?: AbortSignal) => options.api.availableModels?.(signal) ?? Promise.resolve([]) }),
    visionOverrides: options.visionModels ?? [],
    ttlMs: options.modelsCacheTtlMs ?? DEFAULT_MODELS_CACHE_TTL_MS,
    now,
  });
  const toolLists = options.toolLists ?? createToolListCache();
  const deps: TurnDependencies = {
    api: options.api,
    tokenSource: options.tokenSource,
    store,
    catalog,
    environment: options.environment ?? defaultWorkspaceEnvironment(),
    logger,
    now,
    newId: options.newId ?? randomUUID,
    timings: {
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 5000,
      stallTimeoutMs: options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      toolBatchWindowMs: options.toolBatchWindowMs ?? DEFAULT_TOOL_BATCH_WINDOW_MS,
      listedCallsIdleMs: options.listedCallsIdleMs ?? DEFAULT_LISTED_CALLS_IDLE_MS,
      cancelGraceMs: options.cancelGraceMs ?? 250,
      drainTimeoutMs: options.drainTimeoutMs ?? 5000,
    },
    retry: options.retry ?? { attempts: 1, baseDelayMs: 250 },
    toolCallIdSuffix: options.toolCallIdSuffix,
    renewClientVersion: options.renewClientVersion,
    internTools: (tools) => toolLists.intern(tools),
  };
  let lastSweep = Number.NEGATIVE_INFINITY;
  const sweep = () => {
    // Expired conversations are removed at most hourly, off the request path.
    if (now() - lastSweep < 60 * 60 * 1000) return;
    lastSweep = now();
    store.deleteExpired().catch((error: unknown) => logger.warn("Could not remove expired conversations", { error }));
  };
  return {
    startTurn(request: TurnRequest): AgentTurn {
      sweep();
      return new CursorAgentTurn(request, deps);
    },
    listModels: (signal, options) => catalog.list(signal, options),
  };
}
