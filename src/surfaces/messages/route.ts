/**
 * The Anthropic Messages door (`POST /v1/messages` and `/v1/messages/count_tokens`), its own sub-app with
 * Anthropic-shaped errors. A thin translator over the conversation engine: validate, translate to an EngineRequest,
 * run it through the kit's runSurface (model names, engine, abort, log, headers), translate the events back. It does
 * no routing, parking or remembering (the engine does). The sub-app (its guards, its error shape, its 404) exists from
 * the start; what it does with a request (handlers.ts: the schemas, the translation, the token counter) loads on its
 * first request.
 */
import type { Hono } from "hono";
import type { AppEnv } from "../kit/access-log.js";
import { closeSurfaceApp, createSurfaceApp, loadedOnFirstUse, type SurfaceDeps } from "../kit/surface-app.js";
import { anthropicErrorResponse } from "./error-body.js";
import type { MessagesOptions } from "./handlers.js";

export type { MessagesOptions } from "./handlers.js";

/** The Messages sub-app, mounted under /v1. */
export function createMessagesApp(deps: SurfaceDeps, options: MessagesOptions = {}): Hono<AppEnv> {
  const loaded = loadedOnFirstUse(() => import("./handlers.js").then((door) => door.messagesHandlers(deps, options)));
  const app = createSurfaceApp(deps, "/messages", anthropicErrorResponse);
  app.post("/messages", async (c) => (await loaded()).messages(c));
  app.post("/messages/count_tokens", async (c) => (await loaded()).countTokens(c));
  return closeSurfaceApp(app, deps, "/messages");
}
