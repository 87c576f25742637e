/**
 * The Responses door: `POST /v1/responses` (streaming and not), `GET` and `DELETE /v1/responses/{id}`, `GET
 * /v1/responses/{id}/input_items` (input-items.ts), its own
 * sub-app with OpenAI-shaped errors; a thin surface on the conversation engine. It validates, expands `previous_response_id` from the response store into the full item history, hands
 * the neutral request to the engine, and writes the events out. Routing, parking and checkpoints are the engine's.
 * The sub-app (its guards, its error shape, its 404, the stored responses' GET and DELETE) exists from the start; what
 * `POST /v1/responses` does (handlers.ts: the schemas, the translation, the events) loads on its first request.
 */
import type { Hono } from "hono";
import { ProxyError } from "../../util/errors.js";
import type { AppEnv } from "../kit/access-log.js";
import { openAIErrorResponse } from "../kit/openai-error.js";
import { closeSurfaceApp, createSurfaceApp, loadedOnFirstUse } from "../kit/surface-app.js";
import type { ResponsesDeps, ResponsesOptions } from "./handlers.js";
import { listInputItems } from "./input-items.js";
import { storedFor } from "./stored.js";

export type { ResponsesDeps, ResponsesOptions } from "./handlers.js";

function notFound(id: string): ProxyError {
  return new ProxyError("not_found", `Response with id '${id}' not found.`, { param: "response_id" });
}

/** The Responses sub-app, mounted under /v1. */
export function createResponsesApp(deps: ResponsesDeps, options: ResponsesOptions = {}): Hono<AppEnv> {
  const app = createSurfaceApp(deps, "/responses", openAIErrorResponse);
  const handlers = loadedOnFirstUse(() => import("./handlers.js"));
  app.post("/responses", async (c) => (await handlers()).createResponse(c, deps, options));
  app.get("/responses/:id", async (c) => {
    const id = c.req.param("id");
    const stored = await storedFor(deps.store, id, c);
    if (stored === undefined) throw notFound(id);
    return c.json(stored.response);
  });
  app.get("/responses/:id/input_items", async (c) => {
    const id = c.req.param("id");
    const stored = await storedFor(deps.store, id, c);
    if (stored === undefined) throw notFound(id);
    const { limit, order, after, before } = c.req.query();
    return c.json(listInputItems(id, stored.input, { limit, order, after, before }));
  });
  app.delete("/responses/:id", async (c) => {
    const id = c.req.param("id");
    if ((await storedFor(deps.store, id, c)) === undefined || !(await deps.store.delete(id))) throw notFound(id);
    return c.json({ id, object: "response", deleted: true });
  });
  return closeSurfaceApp(app, deps, "/responses");
}
