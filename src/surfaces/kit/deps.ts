import type { MiddlewareHandler } from "hono";
import type { ClusterAuth } from "../../cluster/cluster-auth.js";
import type { BridgeEngine } from "../../engine/index.js";
import type { ResponseStore } from "../../stores/types.js";
import type { Logger } from "../../util/logger.js";
import type { ShutdownNotice } from "../../util/shutdown-notice.js";
import type { AppEnv } from "./access-log.js";
import type { KeyUsageSource } from "./key-usage.js";

/** How reasoning reaches chat clients: a `reasoning_content` field, `<think>` tags in the text, or not at all. */
export type ReasoningOutput = "reasoning_content" | "think-tags" | "none";

/** Which upstream answers: the real Cursor service or the embedded emulator. */
export type UpstreamKind = "cursor" | "emulator";

/** Plain options of the HTTP app (already validated by config/). */
export interface AppOptions {
  /** Local API key clients must present; undefined = no check (loopback only). */
  apiKey: string | undefined;
  /** `family=id` entries choosing the Cursor model for Claude ids (`--anthropic-models`). @default [] */
  anthropicModels?: readonly string[];
  /** `NAME=ID` model aliases for every surface and `/v1/models` (`--model-alias`). @default [] */
  modelAliases?: readonly string[];
  /** Allowed CORS origins; empty = no CORS headers at all. */
  corsOrigins: readonly string[];
  /** Host names served besides loopback (`*` = any). @default [] */
  allowedHosts?: readonly string[];
  /** Browser origins allowed besides the server's own (CORS headers are sent for them too). @default [] */
  allowedOrigins?: readonly string[];
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** Bytes of large request bodies (≥ 1 MiB each) processed at once; more wait their turn. @default 8 MiB */
  largeBodyBudgetBytes?: number;
  /** Total decoded image bytes accepted in one request. @default 15 MiB */
  maxImageBytes?: number;
  reasoningOutput: ReasoningOutput;
  upstream: UpstreamKind;
  /** Whether Cursor credentials are present (reported by /health). */
  loggedIn: boolean;
  version: string;
}

/** This billing cycle's plan usage, as the status page shows it (amounts in cents, as Cursor reports them). */
export interface PlanUsage {
  /** Used ÷ limit; null when the plan reports no limit. */
  usedFraction: number | null;
  usedCents: number;
  limitCents: number;
  remainingCents: number;
  /** ISO times of the billing cycle, when reported; the end is when usage resets. */
  cycleStart: string | null;
  cycleEnd: string | null;
  /** Cursor's own message about the usage, if any. */
  message: string;
  /**
   * The plan's Auto, API (named models) and total usage in percent (0–100, cursor-protocol-addendum-3.md U1); null
   * when Cursor sends none of them.
   */
  autoPercentUsed?: number | null;
  apiPercentUsed?: number | null;
  totalPercentUsed?: number | null;
  /** The Auto and API buckets' spend and limits in cents (U1, U2); null when Cursor sends no bucket. */
  buckets?: { autoSpendCents: number; apiSpendCents: number; autoLimitCents: number; apiLimitCents: number } | null;
  /** The on-demand (spend limit) usage in cents: the individual limit and what is used of it; null when none. */
  onDemand?: { usedCents: number; limitCents: number; limitType: string } | null;
}

/** What the status page (`GET /`) shows besides the engine's state; serve passes it. */
export interface StatusSources {
  /**
   * Who is logged in (email or user id); a function when the login may change while the server runs (a new `login`
   * or `import`), read again for each snapshot (it is expected to be cheap: serve's reads the store only when the
   * stored login changed).
   */
  account?: string | (() => Promise<string | undefined>) | undefined;
  /** The upstream's URL (Cursor's API, or the embedded emulator's loopback URL). */
  upstreamUrl?: string | undefined;
  /** Fetches the plan usage; undefined when the upstream does not report it. */
  usage?: (signal: AbortSignal) => Promise<PlanUsage | undefined>;
  /** Every Cursor account served (named accounts, issue #29), each with its own plan usage. @default none listed */
  accounts?: readonly AccountStatusSource[];
  /**
   * The team gateway: the per-key usage table, shown only to a request `isAdmin` accepts (the admin key; gw-keys
   * decides). While `inUse()` (any virtual key exists), the status page and /status.json need the admin key (or the
   * --api-key): the page then offers a sign-in. @default no table, no sign-in
   */
  keys?: { usage: KeyUsageSource; isAdmin: (request: Request) => boolean; inUse?: () => boolean };
}

/** One served Cursor account on the status page. */
export interface AccountStatusSource {
  name: string;
  /** Requests that name no account run on it. */
  default: boolean;
  /** Who is logged in (email or user id), when known; a function as {@link StatusSources.account}. */
  who: string | (() => Promise<string | undefined>) | undefined;
  /** Fetches the account's plan usage with its own tokens; undefined when not reported. */
  usage: (signal: AbortSignal) => Promise<PlanUsage | undefined>;
}

/** Everything the app needs, injected by the composition root (cli/serve) or by tests. */
export interface AppDeps {
  /** The conversation engine: every API surface runs its turns through it. */
  engine: BridgeEngine;
  /** Stored responses of `/v1/responses`. @default an in-memory store (serve passes the durable file store) */
  responseStore?: ResponseStore;
  logger: Logger;
  options: AppOptions;
  /** For the status page. @default upstream kind and engine state only */
  status?: StatusSources;
  now: () => number;
  newId: () => string;
  /**
   * Several instances sharing a store: the signer of requests between them (enables the forwarded-turn route) and
   * the key every instance signs thinking blocks with. @default a single instance
   */
  cluster?: { auth: ClusterAuth; signingKey: Buffer };
  /**
   * The team gateway's limits (src/gateway/limits: rpm, tpm, max-parallel, budgets, cost headers): installed as the
   * last guard of every API door, after the auth middleware that sets the request's `principal`. @default none
   */
  limits?: MiddlewareHandler<AppEnv>;
  /**
   * Given by a stopping server when its drain time is up: the turns still running end with its error, in their door's
   * shape (run-surface.ts). @default none
   */
  shutdown?: ShutdownNotice;
  /**
   * The shared store's state (`--store redis://…`): undefined while it answers, else why it does not; `/health` is
   * then a 503 naming it, so a load balancer takes the instance out. @default always answering (the file store)
   */
  storeHealth?: () => string | undefined;
}
