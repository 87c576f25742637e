/**
 * The Chat Completions door (`POST /v1/chat/completions`), its own sub-app with OpenAI-shaped errors: parse →
 * translate to an engine request → the kit's runSurface (model names, engine, abort, log, headers) → chunks or one
 * completion. How the turn reaches Cursor (resumed / continued / new / replayed), parking and remembering are the
 * engine's. The sub-app (its guards, its error shape, its 404) exists from the start; what it does with a request
 * (handlers.ts: the schemas, the translation, the events) loads on its first request, so a start serves /health
 * without building the schemas (and without zod).
 */
import type { Hono } from "hono";
import type { AppEnv } from "../kit/access-log.js";
import { openAIErrorResponse } from "../kit/openai-error.js";
import { closeSurfaceApp, createSurfaceApp, loadedOnFirstUse, type SurfaceDeps } from "../kit/surface-app.js";
import type { ChatOptions } from "./handlers.js";

export type { ChatOptions } from "./handlers.js";

/** The chat sub-app, mounted under /v1. */
export function createChatApp(deps: SurfaceDeps, options: ChatOptions): Hono<AppEnv> {
  const app = createSurfaceApp(deps, "/chat", openAIErrorResponse);
  const handlers = loadedOnFirstUse(() => import("./handlers.js"));
  app.post("/chat/completions", async (c) => (await handlers()).createCompletion(c, deps, options));
  return closeSurfaceApp(app, deps, "/chat");
}
