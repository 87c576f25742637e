/** Cursor model metadata → Anthropic's `GET /v1/models` list shape (served when the request has `anthropic-version`). */
import type { ModelInfo } from "../../backend/types.js";
import { contextWindowFor } from "../../util/context-window.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage } from "../../util/logger.js";
import type { AnthropicModel, AnthropicModelList } from "./wire.js";

/** `createdAt`: RFC 3339 time stamped on every entry (Cursor reports no release dates). */
export function toAnthropicModelList(models: readonly ModelInfo[], createdAt: string): AnthropicModelList {
  const data: AnthropicModel[] = models.map((model) => ({
    type: "model",
    id: model.id,
    display_name: model.displayName,
    created_at: createdAt,
    max_input_tokens: model.contextWindow ?? contextWindowFor(model.id),
  }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** The list's query parameters as Anthropic names them (raw strings, undefined when absent). */
export interface AnthropicPageQuery {
  limit?: string | undefined;
  after_id?: string | undefined;
  before_id?: string | undefined;
}

const MAX_LIMIT = 1000;

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", `${param}: ${message}`, { param });
}

/** The position of a cursor id in the list, or a 400 naming the parameter. */
function cursorIndex(data: readonly AnthropicModel[], param: string, id: string): number {
  const index = data.findIndex((model) => model.id === id);
  if (index < 0) throw invalid(param, `no model with id '${clampForMessage(id, 200)}' is listed`);
  return index;
}

/**
 * One page of the list, as Anthropic pages it: `limit` entries (1 to 1000) after `after_id` or right before
 * `before_id`, with `has_more` saying whether more lie in that direction. Without `limit` the page holds every entry
 * after or before the cursor (Anthropic's default is 20; clients that never page still see every model).
 * @throws ProxyError 400 for a `limit` that is no integer from 1 to 1000, a cursor id not listed, or both cursors.
 */
export function pageAnthropicModels(data: readonly AnthropicModel[], query: AnthropicPageQuery): AnthropicModelList {
  let limit = data.length;
  if (query.limit !== undefined) {
    limit = /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) {
      throw invalid("limit", `Input should be an integer from 1 to ${MAX_LIMIT}, got '${query.limit}'`);
    }
  }
  if (query.after_id !== undefined && query.before_id !== undefined) {
    throw invalid("before_id", "give after_id or before_id, not both");
  }
  let start: number;
  let end: number;
  let hasMore: boolean;
  if (query.before_id !== undefined) {
    end = cursorIndex(data, "before_id", query.before_id);
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  } else {
    start = query.after_id === undefined ? 0 : cursorIndex(data, "after_id", query.after_id) + 1;
    end = Math.min(data.length, start + limit);
    hasMore = end < data.length;
  }
  const page = data.slice(start, end);
  return { data: page, has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
}
