/**
 * `POST /v1/responses` (streaming and not), `GET` and `DELETE /v1/responses/{id}`: a thin surface on the conversation
 * engine. It validates, expands `previous_response_id` from the response store into the full item history, hands
 * the neutral request to the engine, and writes the events out. Routing, parking and checkpoints are the engine's.
 */
import type { Context, Hono } from "hono";
import type { JsonValue } from "../../backend/types.js";
import type { Engine } from "../../engine/index.js";
import type { ResponseStore, StoredResponse } from "../../stores/response-store.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";
import type { AppEnv, RequestLog } from "../kit/access-log.js";
import { headerList } from "../kit/header-list.js";
import { observe, readJson } from "../kit/request-io.js";
import { type ResponseEventsOptions, toResponseEvents, toResponseObject } from "./events.js";
import { createBaseResponse } from "./object.js";
import { parseResponsesRequest, parseStoredItems } from "./parse.js";
import { toResponsesSseBody } from "./sse.js";
import { toEngineRequest } from "./translate.js";
import type { ResponseObject } from "./types.js";

/** What the Responses routes need. */
export interface ResponsesDeps {
  engine: Engine;
  store: ResponseStore;
  logger: Logger;
  now: () => number;
  newId: () => string;
}

async function loadPrevious(store: ResponseStore, id: string): Promise<StoredResponse> {
  const previous = await store.get(id);
  if (previous !== undefined) return previous;
  throw new ProxyError("invalid_request", `Previous response with id '${id}' not found.`, {
    param: "previous_response_id",
    detail: "previous_response_not_found",
  });
}

function notFound(id: string): ProxyError {
  return new ProxyError("not_found", `Response with id '${id}' not found.`, { param: "response_id" });
}

/** Handles one `POST /v1/responses`. */
async function createResponse(c: Context, deps: ResponsesDeps, log: RequestLog): Promise<Response> {
  const body = await readJson(c);
  const parsed = parseResponsesRequest(body);
  const { request } = parsed;
  log.model = request.model;
  const ownInput: JsonValue[] =
    typeof request.input === "string"
      ? [{ type: "message", role: "user", content: request.input }]
      : ((body as { input: JsonValue[] }).input ?? []);
  const previous =
    request.previous_response_id == null ? undefined : await loadPrevious(deps.store, request.previous_response_id);
  const earlier: JsonValue[] =
    previous === undefined ? [] : [...previous.input, ...((previous.response.output ?? []) as JsonValue[])];
  const items = [...parseStoredItems(earlier), ...parsed.items];
  const input = toEngineRequest(request, items, parsed.tools);

  const abort = new AbortController();
  const onClientGone = () => abort.abort(new ProxyError("canceled", "The client disconnected."));
  c.req.raw.signal.addEventListener("abort", onClientGone, { once: true });
  const turn = await deps.engine.startTurn(input.request, abort.signal);
  log.route = turn.route;
  // The model that served the turn when Cursor named it (`auto` → its pick), else the requested one.
  const model = turn.servedModel ?? request.model;
  log.model = model;

  const headers: Record<string, string> = {};
  if (parsed.ignoredParams.length > 0)
    headers["x-cursor-bridge-ignored-params"] = headerList(parsed.ignoredParams, ",");
  if (input.warnings.length > 0) headers["x-cursor-bridge-warnings"] = headerList(input.warnings, " | ");

  const id = `resp_${deps.newId()}`;
  const store = request.store !== false;
  const options: ResponseEventsOptions = {
    base: { ...createBaseResponse(request, { id, createdAt: Math.floor(deps.now() / 1000) }), model },
    toolMap: input.toolMap,
    newItemId: (prefix) => `${prefix}_${deps.newId()}`,
    reasoningSummary: request.reasoning?.summary != null,
    includeEncryptedReasoning: request.include?.includes("reasoning.encrypted_content") === true,
    includeWebSources: request.include?.includes("web_search_call.action.sources") === true,
    onFinish: async (response: ResponseObject) => {
      log.parked = turn.parked === true;
      if (!store) return;
      const record = {
        id,
        response: response as unknown as StoredResponse["response"],
        input: [...earlier, ...ownInput],
      };
      await deps.store.put({ ...record, storedAt: deps.now() }).catch((error: unknown) => {
        deps.logger.warn("could not store the response; previous_response_id will not find it", { error });
      });
    },
  };
  const events = observe(turn.events, log, deps.now);
  if (request.stream !== true) {
    try {
      return c.json(await toResponseObject(events, options), 200, headers);
    } finally {
      c.req.raw.signal.removeEventListener("abort", onClientGone);
    }
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  c.header("content-type", "text/event-stream; charset=utf-8");
  c.header("cache-control", "no-cache");
  let finished: () => void = () => {};
  log.streaming = new Promise<void>((resolve) => (finished = resolve));
  const sse = toResponsesSseBody(toResponseEvents(events, options), {
    onError: (error) => (log.streamError = error),
    onCancel: onClientGone,
    onEnd: () => {
      c.req.raw.signal.removeEventListener("abort", onClientGone);
      finished();
    },
  });
  return c.body(sse);
}

/** Mounts the Responses routes (after the app's auth and body-limit middleware). */
export function registerResponsesRoutes(app: Hono<AppEnv>, deps: ResponsesDeps): void {
  app.post("/v1/responses", (c) => createResponse(c, deps, c.get("log")));
  app.get("/v1/responses/:id", async (c) => {
    const id = c.req.param("id");
    const stored = await deps.store.get(id);
    if (stored === undefined) throw notFound(id);
    return c.json(stored.response);
  });
  app.delete("/v1/responses/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await deps.store.delete(id))) throw notFound(id);
    return c.json({ id, object: "response", deleted: true });
  });
}
