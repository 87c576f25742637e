/**
 * `GET /v1/responses/{id}/input_items`: the input items a stored response answered (the `previous_response_id` chain's
 * included, as stored), as OpenAI lists them: each with an `id` (one derived from the response id and the item's place
 * when the client sent none, so pages stay stable), a message's string content as one text part, newest first unless
 * `order=asc`, `limit` (1 to 100, default 20) per page after or before an item id.
 */
import type { JsonValue } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage } from "../../util/logger.js";

/** The list's query parameters as OpenAI names them (raw strings, undefined when absent). */
export interface InputItemsQuery {
  limit?: string | undefined;
  order?: string | undefined;
  after?: string | undefined;
  before?: string | undefined;
}

/** One page of the list. */
export interface InputItemList {
  object: "list";
  data: JsonValue[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

const PREFIX: Record<string, string> = {
  message: "msg",
  function_call: "fc",
  function_call_output: "fco",
  custom_tool_call: "ctc",
  custom_tool_call_output: "ctco",
  reasoning: "rs",
  web_search_call: "ws",
};

function invalid(param: string, message: string): ProxyError {
  return new ProxyError("invalid_request", `Invalid value for '${param}': ${message}`, { param });
}

/** An item as listed: its id (given or derived) first, a message's string content as one text part. */
function listed(item: JsonValue, index: number, responseId: string): { [key: string]: JsonValue } {
  const object: { [key: string]: JsonValue } =
    typeof item === "object" && item !== null && !Array.isArray(item) ? { ...item } : { value: item };
  // A bare `{role, content}` is a message, as the request's own parser reads it.
  const type = typeof object.type === "string" ? object.type : "message";
  if (type === "message" && typeof object.content === "string") {
    const part = object.role === "assistant" ? "output_text" : "input_text";
    object.content = [{ type: part, text: object.content }];
  }
  const given = typeof object.id === "string" && object.id !== "" ? object.id : undefined;
  const id = given ?? `${PREFIX[type] ?? "item"}_${responseId.replace(/^resp_/, "")}_${index}`;
  const { id: _given, type: _type, ...rest } = object;
  return { id, type, ...rest };
}

function cursorIndex(items: readonly { id?: JsonValue }[], param: string, id: string): number {
  const index = items.findIndex((item) => item.id === id);
  if (index < 0) throw invalid(param, `no input item with id '${clampForMessage(id, 200)}' in this response.`);
  return index;
}

/**
 * One page of a stored response's input items.
 * @throws ProxyError 400 naming `limit`, `order`, `after` or `before` when one is not valid.
 */
export function listInputItems(responseId: string, input: readonly JsonValue[], query: InputItemsQuery): InputItemList {
  let limit = DEFAULT_LIMIT;
  if (query.limit !== undefined) {
    limit = /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_LIMIT)) throw invalid("limit", `expected an integer from 1 to ${MAX_LIMIT}.`);
  }
  if (query.order !== undefined && query.order !== "asc" && query.order !== "desc") {
    throw invalid("order", "expected 'asc' or 'desc'.");
  }
  const items = input.map((item, index) => listed(item, index, responseId));
  if (query.order !== "asc") items.reverse();
  let start = 0;
  let end = items.length;
  if (query.after !== undefined) start = cursorIndex(items, "after", query.after) + 1;
  if (query.before !== undefined) end = cursorIndex(items, "before", query.before);
  // `before` alone pages backwards: the items right before it.
  if (query.before !== undefined && query.after === undefined) start = Math.max(0, end - limit);
  const stop = Math.max(start, Math.min(end, start + limit));
  const data = items.slice(start, stop);
  const hasMore = query.before !== undefined && query.after === undefined ? start > 0 : stop < end;
  const id = (item: { id?: JsonValue } | undefined) => (typeof item?.id === "string" ? item.id : null);
  return { object: "list", data, first_id: id(data[0]), last_id: id(data.at(-1)), has_more: hasMore };
}
