/**
 * What a turn (agent-turn.ts) is given by the agent client that makes it: the API, the stores, the clocks and the
 * timings every turn shares.
 */
import type { CursorApi } from "../protocol/cursor/cursor-api.js";
import type { ConversationStore } from "../stores/types.js";
import type { Logger } from "../util/logger.js";
import type { ModelCatalog } from "./models.js";
import type { SessionTimings } from "./run-session.js";
import type { ClientTool, TokenSource } from "./types.js";
import type { WorkspaceEnvironment } from "./workspace-environment.js";

/** Everything a turn needs, injected by the agent client. */
export interface TurnDependencies {
  api: CursorApi;
  tokenSource: TokenSource;
  store: ConversationStore;
  catalog: ModelCatalog;
  environment: WorkspaceEnvironment;
  logger: Logger;
  now: () => number;
  newId: () => string;
  timings: SessionTimings & { cancelGraceMs: number; drainTimeoutMs: number };
  retry: { attempts: number; baseDelayMs: number };
  /** See AgentClientOptions.renewClientVersion. */
  renewClientVersion?: (() => Promise<boolean>) | undefined;
  /** Appended to every tool-call id (names this instance when several share a store). */
  toolCallIdSuffix?: string | undefined;
  /**
   * The shared list equal to `tools` (tool-list-cache.ts), so parked turns with the same tools share one list, name
   * map and request context; called once the first Run's request is written, since it serialises every schema.
   */
  internTools?: ((tools: ClientTool[]) => ClientTool[]) | undefined;
}
