/**
 * The `response` object a turn starts from: id, creation time, model and the request fields OpenAI echoes back
 * (`instructions`, `tools`, `tool_choice`, `reasoning`, `store`, `metadata`…), with status `in_progress`.
 */
import type { ResponsesRequest } from "./request.js";
import type { ResponseObject } from "./wire.js";

/** What identifies a new response. */
export interface ResponseIdentity {
  id: string;
  /** Unix seconds. */
  createdAt: number;
}

/** The request's `text` as OpenAI echoes it: its format as given, `text` when absent, and the verbosity if set. */
function echoText(text: ResponsesRequest["text"]): ResponseObject["text"] {
  const echoed: ResponseObject["text"] = { format: text?.format ?? { type: "text" } };
  if (text?.verbosity != null) echoed.verbosity = text.verbosity;
  return echoed;
}

/** Builds the in-progress response object for a request. */
export function createBaseResponse(request: ResponsesRequest, identity: ResponseIdentity): ResponseObject {
  return {
    id: identity.id,
    object: "response",
    created_at: identity.createdAt,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? null,
    text: echoText(request.text),
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? null,
    truncation: "disabled",
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}
