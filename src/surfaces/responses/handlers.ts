/**
 * What the Responses door does with `POST /v1/responses` (route.ts loads it on the door's first such request, so a
 * server no client asks in that format never compiles this code or builds its schemas): validate, expand
 * `previous_response_id` from the response store into the full item history, hand the neutral request to the engine,
 * and write the events out (storing the response unless `store: false`).
 */
import type { Context } from "hono";
import type { JsonValue } from "../../backend/types.js";
import type { ResponseStore, StoredResponse } from "../../stores/types.js";
import { ProxyError } from "../../util/errors.js";
import type { AppEnv } from "../kit/access-log.js";
import { ImageBudget } from "../kit/image-input.js";
import { readJson } from "../kit/json-body.js";
import { runSurface } from "../kit/run-surface.js";
import type { SurfaceDeps } from "../kit/surface-app.js";
import { RESPONSES_WIRE, type ResponseEventsOptions, responseTranslation } from "./events.js";
import { createBaseResponse } from "./object.js";
import { parseResponsesRequest, parseStoredItems } from "./parse.js";
import { ownerOf, RESPONSE_ID_PREFIX, storedFor } from "./stored.js";
import { toEngineRequest } from "./translate.js";
import type { ResponseObject } from "./wire.js";

/** What the Responses routes need besides the kit. */
export interface ResponsesDeps extends SurfaceDeps {
  store: ResponseStore;
}

/** Options of the Responses door. */
export interface ResponsesOptions {
  /** Total decoded image bytes accepted in one request. @default DEFAULT_MAX_IMAGE_BYTES (kit/image-input.ts, 15 MiB) */
  maxImageBytes?: number | undefined;
}

/** The response `id` continues, when the caller may see it (another virtual key's is unknown: stored.ts). */
async function loadPrevious(store: ResponseStore, id: string, c: Context<AppEnv>): Promise<StoredResponse> {
  const previous = await storedFor(store, id, c);
  if (previous !== undefined) return previous;
  throw new ProxyError("invalid_request", `Previous response with id '${id}' not found.`, {
    param: "previous_response_id",
    detail: "previous_response_not_found",
  });
}

/** Handles one `POST /v1/responses`. */
export async function createResponse(
  c: Context<AppEnv>,
  deps: ResponsesDeps,
  options: ResponsesOptions,
): Promise<Response> {
  const body = await readJson(c);
  const owner = ownerOf(c);
  const parsed = parseResponsesRequest(body);
  const { request } = parsed;
  const ownInput: JsonValue[] =
    typeof request.input === "string"
      ? [{ type: "message", role: "user", content: request.input }]
      : ((body as { input: JsonValue[] }).input ?? []);
  const previous =
    request.previous_response_id == null ? undefined : await loadPrevious(deps.store, request.previous_response_id, c);
  const earlier: JsonValue[] =
    previous === undefined ? [] : [...previous.input, ...((previous.response.output ?? []) as JsonValue[])];
  const storedItems = parseStoredItems(earlier);
  const items = [...storedItems, ...parsed.items];
  const images = new ImageBudget(options.maxImageBytes);
  const input = toEngineRequest(request, items, parsed.tools, images, storedItems.length);

  const id = `${RESPONSE_ID_PREFIX}${deps.newId()}`;
  const store = request.store !== false;
  const eventOptions = (model: string): ResponseEventsOptions => ({
    base: { ...createBaseResponse(request, { id, createdAt: Math.floor(deps.now() / 1000) }), model },
    toolMap: input.toolMap,
    newItemId: (prefix) => `${prefix}_${deps.newId()}`,
    reasoningSummary: request.reasoning?.summary != null,
    includeEncryptedReasoning: request.include?.includes("reasoning.encrypted_content") === true,
    includeWebSources: request.include?.includes("web_search_call.action.sources") === true,
    onFinish: async (response: ResponseObject) => {
      if (!store) return;
      const record: StoredResponse = {
        id,
        response: response as unknown as StoredResponse["response"],
        input: [...earlier, ...ownInput],
        storedAt: deps.now(),
      };
      if (owner !== undefined) record.owner = owner;
      await deps.store.put(record).catch((error: unknown) => {
        deps.logger.warn("could not store the response; previous_response_id will not find it", { error });
      });
    },
  });
  return runSurface(
    c,
    deps,
    {
      request: input.request,
      ignoredParams: parsed.ignoredParams,
      warnings: input.warnings,
      stream: request.stream === true,
      maxOutputTokens: request.max_output_tokens ?? undefined,
      // A `reasoning` object (effort other than none): OpenAI's max_output_tokens then includes the reasoning.
      reasoningRequested: request.reasoning != null && input.request.options.reasoning,
    },
    { translation: (turn) => responseTranslation(eventOptions(turn.model)), wire: RESPONSES_WIRE },
  );
}
