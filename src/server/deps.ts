import type { ReasoningOutput } from "../bridge/chunk-stream.js";
import type { ClusterAuth } from "../cluster/cluster-auth.js";
import type { BridgeEngine } from "../engine/index.js";
import type { ResponseStore } from "../engine/response-store.js";
import type { Logger } from "../util/logger.js";

/** Which upstream answers: the real Cursor service or the embedded emulator. */
export type UpstreamKind = "cursor" | "emulator";

/** Plain options of the HTTP app (already validated by config/). */
export interface AppOptions {
  /** Local API key clients must present; undefined = no check (loopback only). */
  apiKey: string | undefined;
  /** `family=id` entries choosing the Cursor model for Claude ids (`--anthropic-models`). @default [] */
  anthropicModels?: readonly string[];
  /** Allowed CORS origins; empty = no CORS headers at all. */
  corsOrigins: readonly string[];
  /** Host names served besides loopback (`*` = any). @default [] */
  allowedHosts?: readonly string[];
  /** Browser origins allowed besides the server's own (CORS headers are sent for them too). @default [] */
  allowedOrigins?: readonly string[];
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** Total decoded image bytes accepted in one request. @default 20 MiB */
  maxImageBytes?: number;
  reasoningOutput: ReasoningOutput;
  upstream: UpstreamKind;
  /** Whether Cursor credentials are present (reported by /health). */
  loggedIn: boolean;
  version: string;
}

/** Everything the app needs, injected by the composition root (cli/serve) or by tests. */
export interface AppDeps {
  /** The conversation engine: every API surface runs its turns through it. */
  engine: BridgeEngine;
  /** Stored responses of `/v1/responses`. @default an in-memory store (serve passes the durable file store) */
  responseStore?: ResponseStore;
  logger: Logger;
  options: AppOptions;
  now: () => number;
  newId: () => string;
  /**
   * Several instances sharing a store: the signer of requests between them (enables the forwarded-turn route) and
   * the key every instance signs thinking blocks with. @default a single instance
   */
  cluster?: { auth: ClusterAuth; signingKey: Buffer };
}
