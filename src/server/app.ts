/**
 * The Hono app factory (`createApp(deps)`, so tests call `app.request()` without sockets). Every API door is its own
 * sub-app mounted under /v1 with `app.route()`, answering its errors in its own shape: chat completions and
 * responses OpenAI's, messages Anthropic's; /v1/models OpenAI's unless the request carries `anthropic-version`.
 * Besides them: GET /health, the status page (GET /, GET /status.json), the Prometheus metrics (GET /metrics, admin
 * key or loopback only) and, with several instances, the forwarded turn route. Anything else is a 404 naming the endpoints that exist.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { FORWARD_PATH, RELEASE_PATH } from "../cluster/wire.js";
import { createGatewayMetrics } from "../gateway/metrics/gateway-metrics.js";
import type { KeySpendSource } from "../gateway/metrics/key-spend-source.js";
import { metricsHandler } from "../gateway/metrics/metrics-route.js";
import { createMemoryResponseStore } from "../stores/memory/response-store.js";
import { createChatApp } from "../surfaces/chat/route.js";
import { type AppEnv, accessLog } from "../surfaces/kit/access-log.js";
import type { AppDeps } from "../surfaces/kit/deps.js";
import { IMAGE_PART_MARKS } from "../surfaces/kit/image-input.js";
import { createModelNames } from "../surfaces/kit/model-names.js";
import { openAIErrorResponse } from "../surfaces/kit/openai-error.js";
import { createRecentRequests } from "../surfaces/kit/recent-requests.js";
import type { SurfaceDeps } from "../surfaces/kit/surface-app.js";
import { createMessagesApp } from "../surfaces/messages/route.js";
import { createResponsesApp } from "../surfaces/responses/route.js";
import { logUpdatedOnDisk } from "../util/code-on-disk.js";
import { ProxyError } from "../util/errors.js";
import { clampForMessage } from "../util/logger.js";
import { requireApiKey } from "./api-key.js";
import { admitLargeBodies, createLanedBodyGate, LARGE_BODY_BUDGET_BYTES } from "./body-gate.js";
import { discardBody, limitBody } from "./body-limit.js";
import { handleForwardedTurn, handleParkedRelease } from "./cluster-route.js";
import { createModelsApp } from "./models-route.js";
import { guardHost, guardOrigin, requireJson } from "./request-guard.js";
import { registerStatusRoutes } from "./status-page.js";
import { steerUsageLimits } from "./usage-limit-steering.js";

/**
 * The 404 for a path no route serves: names the endpoints that exist (read from the app's routes, so new ones are
 * listed without touching this), and points at /v1 only when the path lacks it.
 */
function routeNotFound(app: Hono<AppEnv>, method: string, path: string): ProxyError {
  const endpoints = new Map<string, Set<string>>();
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.includes("*")) continue;
    const path = route.path.replace(/\{[^}]*\}/g, ""); // "/v1/models/:id{.+}" → "/v1/models/:id"
    const methods = endpoints.get(path) ?? new Set<string>();
    methods.add(route.method);
    endpoints.set(path, methods);
  }
  const list = [...endpoints].map(([route, methods]) => `${[...methods].join("/")} ${route}`).join(", ");
  const underV1 = path === "/v1" || path.startsWith("/v1/");
  const hint = underV1 ? "" : " The API lives under /v1.";
  return new ProxyError(
    "not_found",
    `No route for ${method} ${clampForMessage(path, 200)}.${hint} Endpoints: ${list}.`,
    {
      detail: "route_not_found",
    },
  );
}

/**
 * The team gateway's parts the app mounts (src/gateway/, built by the composition root): the auth guard that takes the
 * place of the single `--api-key` check on every API door (it sets the request's principal), the /admin API, and
 * what /metrics needs.
 */
export interface AppGateway {
  /** The virtual-key check of every API door; without it the single `--api-key` check. */
  auth?: MiddlewareHandler<AppEnv> | undefined;
  /** More guards of every API door, run right after `auth` (the principal is set). */
  guards?: readonly MiddlewareHandler<AppEnv>[] | undefined;
  /** Mounted under /admin; without it /admin is a 404. */
  admin?: Hono<AppEnv> | undefined;
  /** The admin key (`--admin-key`): besides loopback clients, it may read /metrics. */
  adminKey?: string | undefined;
  /** Every virtual key's spend and budget, for the spend gauges of /metrics. @default no spend gauges */
  keySpend?: KeySpendSource | undefined;
  /**
   * Tells the engine when the owner of turns (a virtual key's id, EngineRequest.owner) is gone for good (revoked,
   * expired): its parked turns are closed then (server/app-wiring.ts). @default never
   */
  onOwnerGone?: ((listener: (owner: string, reason: string) => void) => unknown) | undefined;
  /** Count requests and serve /metrics; off only to measure what they cost (bench). @default true */
  metrics?: boolean;
}

/** Builds the HTTP app from injected dependencies. */
export function createApp(deps: AppDeps, gateway: AppGateway = {}): Hono<AppEnv> {
  const { options, logger } = deps;
  const app = new Hono<AppEnv>();

  const recent = createRecentRequests(50);
  const metrics =
    gateway.metrics === false
      ? undefined
      : createGatewayMetrics({ parkedCount: () => deps.engine.parkedCount(), spend: gateway.keySpend, logger });
  const onRequestDone = metrics === undefined ? [] : [metrics.onRequestDone];
  app.use(accessLog(logger, deps.now, deps.newId, (record) => recent.add(record), onRequestDone));
  const allowedOrigins = [...new Set([...(options.allowedOrigins ?? []), ...options.corsOrigins])];
  const guard = { allowedHosts: options.allowedHosts ?? [], allowedOrigins };
  // Host and Origin first, then CORS: on every path (each door runs them itself, so their 403s are in its shape).
  const edge: MiddlewareHandler<AppEnv>[] = [guardHost(guard), guardOrigin(guard)];
  if (allowedOrigins.length > 0) {
    edge.push(
      cors({
        origin: allowedOrigins,
        allowHeaders: ["authorization", "content-type", "x-api-key", "x-request-id"],
        exposeHeaders: [
          "x-request-id",
          "x-cursor-bridge-ignored-params",
          "x-cursor-bridge-warnings",
          "retry-after",
          "x-should-retry",
          "x-cursor-bridge-cost",
          "x-cursor-bridge-spend",
          "x-cursor-bridge-budget-reset",
          ...["requests", "tokens"].flatMap((unit) =>
            ["limit", "remaining", "reset"].map((part) => `x-ratelimit-${part}-${unit}`),
          ),
        ],
      }),
    );
  }
  // Counted as it arrives (declared or chunked alike); a body over the limit is never kept, and is read to its end
  // before the 413 so the client can read the answer. The answer says what raises the limit; it speaks of images only
  // when the body had image parts (kit/image-input.ts's marks, looked for in an oversized body only).
  const imageCap = options.maxImageBytes;
  const images =
    imageCap === undefined
      ? undefined
      : imageCap >= 1024 * 1024
        ? `${(imageCap / 1024 / 1024).toFixed(0)} MiB`
        : `${imageCap} bytes`;
  const tooLarge = limitBody(
    options.maxBodyBytes,
    (_c, over) => {
      const why =
        over.marked && images !== undefined
          ? `: --max-body-bytes plus room for ${images} of images (--max-image-bytes); a larger image cannot be sent.`
          : "; --max-body-bytes raises it.";
      throw new ProxyError(
        "request_too_large",
        `The request body is larger than ${options.maxBodyBytes} bytes, this server's limit${why}`,
        { detail: "body_too_large" },
      );
    },
    IMAGE_PART_MARKS,
  );
  // The guards of every API request: the key (the gateway's virtual keys, else the local API key), JSON content type,
  // body size, and large bodies processed a few at a time (one memory budget for all doors; small requests never wait).
  // The gateway's own guards that need the principal (limits) run right after the key check.
  const keyCheck = gateway.auth ?? (options.apiKey === undefined ? undefined : requireApiKey(options.apiKey));
  const api: MiddlewareHandler<AppEnv>[] = [
    ...(keyCheck === undefined ? [] : [keyCheck]),
    ...(gateway.guards ?? []),
    requireJson(),
    tooLarge,
    admitLargeBodies(createLanedBodyGate(options.largeBodyBudgetBytes ?? LARGE_BODY_BUDGET_BYTES)),
    // OpenCode and Codex hide a 429 usage limit behind their own retries or text: each gets a form it shows at once.
    steerUsageLimits(),
    // Last: a virtual key's limits see the principal the auth set, and refuse nothing a guard above would refuse.
    ...(deps.limits === undefined ? [] : [deps.limits]),
  ];
  // Each door installs all of them on its own paths, so whatever they refuse is answered in the door's shape; a door
  // answers without calling on, so the app-wide copies below never run twice for its paths.
  const guards = [...edge, ...api];
  const models = createModelNames({ aliases: options.modelAliases, anthropicModels: options.anthropicModels });
  const surface: SurfaceDeps = {
    engine: deps.engine,
    models,
    now: deps.now,
    newId: deps.newId,
    logger,
    guards,
    shutdown: deps.shutdown,
    routeNotFound: (method, path) => routeNotFound(app, method, path),
  };
  app.route("/v1", createModelsApp(deps, models.aliases, guards));
  app.route("/v1", createChatApp(surface, options));
  app.route(
    "/v1",
    createMessagesApp(surface, { signingKey: deps.cluster?.signingKey, maxImageBytes: options.maxImageBytes }),
  );
  app.route(
    "/v1",
    createResponsesApp({ ...surface, store: deps.responseStore ?? createMemoryResponseStore() }, options),
  );
  for (const middleware of edge) app.use(middleware);
  app.get("/health", (c) => {
    // Every API request would be a 503 store_unavailable while the shared store is down: so is /health.
    const storeDown = deps.storeHealth?.();
    return c.json(
      {
        status: storeDown === undefined ? "ok" : "unavailable",
        ...(storeDown === undefined ? {} : { reason: `the shared store ${storeDown}` }),
        version: options.version,
        upstream: options.upstream,
        emulator: options.upstream === "emulator",
        logged_in: options.loggedIn,
        parked_turns: deps.engine.parkedCount(),
      },
      storeDown === undefined ? 200 : 503,
    );
  });
  if (metrics !== undefined) app.get("/metrics", metricsHandler(metrics, { adminKey: gateway.adminKey }));
  if (gateway.admin !== undefined) {
    app.use("/admin/*", tooLarge);
    app.route("/admin", gateway.admin);
  }
  registerStatusRoutes(app, { engine: deps.engine, options, status: deps.status, recent, now: deps.now });
  // Any other /v1 path: the same guards (an API key is asked for before the 404 lists the endpoints).
  for (const middleware of api) app.use("/v1/*", middleware);

  const cluster = deps.cluster;
  if (cluster !== undefined) {
    app.use("/internal/*", tooLarge);
    app.post(FORWARD_PATH, (c) => handleForwardedTurn(c, deps.engine, cluster.auth, deps.shutdown));
    app.post(RELEASE_PATH, (c) => handleParkedRelease(c, deps.engine, cluster.auth));
  }

  // Thrown rather than answered, so the request log names its code like every other failure. A body sent along is
  // read and dropped first: answering while the client still uploads would reset its connection.
  app.all("*", async (c) => {
    await discardBody(c);
    throw routeNotFound(app, c.req.method, c.req.path);
  });
  app.onError((error, c) => {
    const proxyError = ProxyError.from(error);
    const requestId = c.get("log")?.requestId;
    if (proxyError.code === "internal") {
      logger.error("unhandled error", { request_id: requestId, path: clampForMessage(c.req.path, 200), error });
    }
    logUpdatedOnDisk(proxyError, logger, clampForMessage(c.req.path, 200));
    return openAIErrorResponse(proxyError, { requestId });
  });
  return app;
}
