/**
 * The Hono app factory (`createApp(deps)`, so tests call `app.request()` without sockets).
 * Routes: POST /v1/chat/completions, POST /v1/messages (+ /count_tokens), POST/GET/DELETE /v1/responses,
 * GET /v1/models, GET /v1/models/:id, GET /health, and the status page (GET /, GET /status.json). Errors are
 * Anthropic-shaped for Anthropic clients (`anthropic-version` header or a /v1/messages path).
 */
import { type Context, Hono } from "hono";
import { cors } from "hono/cors";
import { FORWARD_PATH } from "../cluster/wire.js";
import { createMemoryResponseStore } from "../stores/response-store.js";
import { handleChatCompletions } from "../surfaces/chat/route.js";
import { type AppEnv, accessLog } from "../surfaces/kit/access-log.js";
import type { AppDeps } from "../surfaces/kit/deps.js";
import { toOpenAIModelList } from "../surfaces/kit/model-list.js";
import { toOpenAIError } from "../surfaces/kit/openai-error.js";
import { createRecentRequests } from "../surfaces/kit/recent-requests.js";
import { toAnthropicModelList } from "../surfaces/messages/models.js";
import { anthropicErrorResponse, createMessagesHandlers, PING_INTERVAL_MS } from "../surfaces/messages/route.js";
import { registerResponsesRoutes } from "../surfaces/responses/route.js";
import { ProxyError } from "../util/errors.js";
import { clampForMessage } from "../util/logger.js";
import { requireApiKey } from "./api-key.js";
import { admitLargeBodies, createBodyGate, LARGE_BODY_BUDGET_BYTES } from "./body-gate.js";
import { limitBody } from "./body-limit.js";
import { handleForwardedTurn } from "./cluster-route.js";
import { guardHost, guardOrigin, requireJson } from "./request-guard.js";
import { registerStatusRoutes } from "./status-page.js";

const isAnthropic = (c: Context) =>
  c.req.header("anthropic-version") !== undefined || c.req.path.startsWith("/v1/messages");

function errorResponse(error: unknown, c: Context<AppEnv>): Response {
  const requestId = c.get("log")?.requestId;
  if (isAnthropic(c)) return anthropicErrorResponse(error, requestId);
  const { status, headers, body } = toOpenAIError(error, { requestId });
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json; charset=utf-8" },
  });
}

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

/** Builds the HTTP app from injected dependencies. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { options, logger } = deps;
  const ownedBy = options.upstream === "emulator" ? "cursor-emulator" : "cursor";
  const app = new Hono<AppEnv>();

  const recent = createRecentRequests(50);
  app.use(accessLog(logger, deps.now, deps.newId, (record) => recent.add(record)));
  const allowedOrigins = [...new Set([...(options.allowedOrigins ?? []), ...options.corsOrigins])];
  const guard = { allowedHosts: options.allowedHosts ?? [], allowedOrigins };
  app.use(guardHost(guard));
  app.use(guardOrigin(guard));
  if (allowedOrigins.length > 0) {
    app.use(
      cors({
        origin: allowedOrigins,
        allowHeaders: ["authorization", "content-type", "x-api-key", "x-request-id"],
        exposeHeaders: [
          "x-request-id",
          "x-cursor-bridge-ignored-params",
          "x-cursor-bridge-warnings",
          "retry-after",
          "x-should-retry",
        ],
      }),
    );
  }
  app.get("/health", (c) =>
    c.json({
      status: "ok",
      version: options.version,
      upstream: options.upstream,
      emulator: options.upstream === "emulator",
      logged_in: options.loggedIn,
      parked_turns: deps.engine.parkedCount(),
    }),
  );
  registerStatusRoutes(app, { engine: deps.engine, options, status: deps.status, recent, now: deps.now });
  if (options.apiKey !== undefined) app.use("/v1/*", requireApiKey(options.apiKey));
  app.use("/v1/*", requireJson());
  // Refused from content-length before the body is read: a body over the limit can never be served.
  const imageHint =
    options.maxImageBytes === undefined
      ? ""
      : ` It allows for ${(options.maxImageBytes / 1024 / 1024).toFixed(0)} MiB of images (--max-image-bytes); a larger image cannot be sent.`;
  app.use(
    "/v1/*",
    limitBody(options.maxBodyBytes, () => {
      throw new ProxyError(
        "request_too_large",
        `The request body is larger than ${options.maxBodyBytes} bytes.${imageHint}`,
        { detail: "body_too_large" },
      );
    }),
  );
  // Large bodies are processed a few at a time (memory budget); small requests never wait.
  app.use("/v1/*", admitLargeBodies(createBodyGate(options.largeBodyBudgetBytes ?? LARGE_BODY_BUDGET_BYTES)));

  app.get("/v1/models", async (c) => {
    const models = await deps.engine.listModels(c.req.raw.signal);
    if (isAnthropic(c)) return c.json(toAnthropicModelList(models, new Date(deps.now()).toISOString()));
    return c.json({ object: "list", data: toOpenAIModelList(models, ownedBy, Math.floor(deps.now() / 1000)) });
  });
  app.get("/v1/models/:id{.+}", async (c) => {
    const id = c.req.param("id");
    const models = toOpenAIModelList(await deps.engine.listModels(c.req.raw.signal), ownedBy, 0);
    const model = models.find((m) => m.id === id);
    if (!model) {
      throw new ProxyError("not_found", `The model \`${id}\` does not exist.`, {
        param: "model",
        detail: "model_not_found",
      });
    }
    const createdAt = new Date(deps.now()).toISOString();
    if (isAnthropic(c)) {
      return c.json({ type: "model", id: model.id, display_name: model.display_name, created_at: createdAt });
    }
    return c.json({ ...model, created: Math.floor(deps.now() / 1000) });
  });
  app.post("/v1/chat/completions", (c) => handleChatCompletions(c, deps, c.get("log")));
  const anthropic = createMessagesHandlers({
    ...deps,
    pingIntervalMs: PING_INTERVAL_MS,
    anthropicModels: options.anthropicModels ?? [],
    signingKey: deps.cluster?.signingKey,
  });
  app.post("/v1/messages", (c) => anthropic.messages(c, c.get("log")));
  app.post("/v1/messages/count_tokens", (c) => anthropic.countTokens(c));
  registerResponsesRoutes(app, { ...deps, store: deps.responseStore ?? createMemoryResponseStore() });
  const cluster = deps.cluster;
  if (cluster !== undefined) {
    app.use(
      "/internal/*",
      limitBody(options.maxBodyBytes, () => {
        throw new ProxyError("request_too_large", `The request body is larger than ${options.maxBodyBytes} bytes.`, {
          detail: "body_too_large",
        });
      }),
    );
    app.post(FORWARD_PATH, (c) => handleForwardedTurn(c, deps.engine, cluster.auth));
  }

  app.notFound((c) => errorResponse(routeNotFound(app, c.req.method, c.req.path), c));
  app.onError((error, c) => {
    const proxyError = ProxyError.from(error);
    if (proxyError.code === "internal") {
      const requestId = c.get("log")?.requestId;
      logger.error("unhandled error", { request_id: requestId, path: clampForMessage(c.req.path, 200), error });
    }
    return errorResponse(proxyError, c);
  });
  return app;
}
