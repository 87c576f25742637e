/**
 * The Hono app factory (house-style §1: `createApp(deps)`; tests call `app.request()` without sockets).
 * Routes: POST /v1/chat/completions, GET /v1/models, GET /v1/models/:id, GET /health.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import { toOpenAIModelList } from "../bridge/model-list.js";
import { toOpenAIError } from "../openai/error-body.js";
import { ProxyError } from "../util/errors.js";
import { type AppEnv, accessLog } from "./access-log.js";
import { requireApiKey } from "./api-key.js";
import { limitBody } from "./body-limit.js";
import { handleChatCompletions } from "./chat-completions.js";
import type { AppDeps } from "./deps.js";

function errorResponse(error: unknown): Response {
  const { status, headers, body } = toOpenAIError(error);
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** Builds the HTTP app from injected dependencies. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { options, logger } = deps;
  const ownedBy = options.upstream === "emulator" ? "cursor-emulator" : "cursor";
  const app = new Hono<AppEnv>();

  app.use(accessLog(logger, deps.now, deps.newId));
  if (options.corsOrigins.length > 0) {
    app.use(cors({ origin: [...options.corsOrigins], allowHeaders: ["authorization", "content-type", "x-api-key"] }));
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
  if (options.apiKey !== undefined) app.use("/v1/*", requireApiKey(options.apiKey));
  app.use(
    "/v1/*",
    limitBody(options.maxBodyBytes, () => {
      throw new ProxyError("invalid_request", `The request body is larger than ${options.maxBodyBytes} bytes.`, {
        status: 413,
      });
    }),
  );

  app.get("/v1/models", async (c) => {
    const models = await deps.engine.listModels(c.req.raw.signal);
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
    return c.json({ ...model, created: Math.floor(deps.now() / 1000) });
  });
  app.post("/v1/chat/completions", (c) => handleChatCompletions(c, deps, c.get("log")));

  app.notFound((c) =>
    errorResponse(new ProxyError("not_found", `No route for ${c.req.method} ${c.req.path}. The API lives under /v1.`)),
  );
  app.onError((error, c) => {
    const proxyError = ProxyError.from(error);
    if (proxyError.code === "internal") logger.error("unhandled error", { path: c.req.path, error });
    return errorResponse(proxyError);
  });
  return app;
}
