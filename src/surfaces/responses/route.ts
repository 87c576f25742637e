/**
 * The Responses door: `POST /v1/responses` (streaming and not), `GET` and `DELETE /v1/responses/{id}`, its own
 * sub-app with OpenAI-shaped errors; a thin surface on the conversation engine. It validates, expands `previous_response_id` from the response store into the full item history, hands
 * the neutral request to the engine, and writes the events out. Routing, parking and checkpoints are the engine's.
 * The sub-app (its guards, its error shape, its 404, the stored responses' GET and DELETE) exists from the start; what
 * `POST /v1/responses` does (handlers.ts: the schemas, the translation, the events) loads on its first request.
 */
import type { Context, Hono } from "hono";
import type { StoredResponse } from "../../stores/types.js";
import { ProxyError } from "../../util/errors.js";
import type { AppEnv } from "../kit/access-log.js";
import { openAIErrorResponse } from "../kit/openai-error.js";
import { closeSurfaceApp, createSurfaceApp, loadedOnFirstUse } from "../kit/surface-app.js";
import type { ResponsesDeps, ResponsesOptions } from "./handlers.js";

export type { ResponsesDeps, ResponsesOptions } from "./handlers.js";

function notFound(id: string): ProxyError {
  return new ProxyError("not_found", `Response with id '${id}' not found.`, { param: "response_id" });
}

/**
 * Whether the request's caller may see a stored response: the virtual key that made it, or, for one made without
 * virtual keys, a request without one. Another key's response is "not found", as an unknown id is.
 */
export function ownsResponse(stored: Pick<StoredResponse, "owner">, c: Context<AppEnv>): boolean {
  return stored.owner === c.get("principal")?.keyId;
}

/** The Responses sub-app, mounted under /v1. */
export function createResponsesApp(deps: ResponsesDeps, options: ResponsesOptions = {}): Hono<AppEnv> {
  const app = createSurfaceApp(deps, "/responses", openAIErrorResponse);
  const handlers = loadedOnFirstUse(() => import("./handlers.js"));
  app.post("/responses", async (c) => (await handlers()).createResponse(c, deps, options));
  app.get("/responses/:id", async (c) => {
    const id = c.req.param("id");
    const stored = await deps.store.get(id);
    if (stored === undefined || !ownsResponse(stored, c)) throw notFound(id);
    return c.json(stored.response);
  });
  app.delete("/responses/:id", async (c) => {
    const id = c.req.param("id");
    const stored = await deps.store.get(id);
    if (stored === undefined || !ownsResponse(stored, c) || !(await deps.store.delete(id))) throw notFound(id);
    return c.json({ id, object: "response", deleted: true });
  });
  return closeSurfaceApp(app, deps, "/responses");
}
