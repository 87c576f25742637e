/**
 * Output shapes of `POST /v1/responses` as OpenAI sends them (openai-node's `Response` and `ResponseStreamEvent`), and
 * as Codex CLI reads them. Only the item and event kinds the bridge produces are modelled.
 */

/** Token counts in the Responses API's naming. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** One text part of an assistant message. */
export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: UrlCitation[];
  logprobs: never[];
}

/** A web search result the text cites (issue #27): where the text names its URL. */
export interface UrlCitation {
  type: "url_citation";
  start_index: number;
  end_index: number;
  url: string;
  title: string;
}

/** One summary part of a reasoning item. */
export interface SummaryTextPart {
  type: "summary_text";
  text: string;
}

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface MessageOutputItem {
  type: "message";
  id: string;
  status: ItemStatus;
  role: "assistant";
  content: OutputTextPart[];
}

export interface ReasoningOutputItem {
  type: "reasoning";
  id: string;
  summary: SummaryTextPart[];
  /** Present only when the request's `include` asked for `reasoning.encrypted_content`. */
  encrypted_content?: string;
}

export interface FunctionCallOutputItem {
  type: "function_call";
  id: string;
  status: ItemStatus;
  call_id: string;
  name: string;
  /** Set for a function of a `namespace` tool; `name` is then the function's own name inside it. */
  namespace?: string;
  arguments: string;
}

export interface CustomToolCallOutputItem {
  type: "custom_tool_call";
  id: string;
  status: ItemStatus;
  call_id: string;
  name: string;
  input: string;
}

/** A web search (or page fetch) Cursor ran. */
export interface WebSearchCallOutputItem {
  type: "web_search_call";
  id: string;
  status: "in_progress" | "searching" | "completed" | "failed";
  action:
    | { type: "search"; query: string; sources?: { type: "url"; url: string }[] }
    | { type: "open_page"; url: string };
}

export type OutputItem =
  | MessageOutputItem
  | ReasoningOutputItem
  | FunctionCallOutputItem
  | CustomToolCallOutputItem
  | WebSearchCallOutputItem;

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

/** The `response` object: the non-streaming body, and the payload of the lifecycle events. */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  /** The request's `text` (its `format` as given, `{type: "text"}` when absent), as OpenAI echoes it. */
  text: { format: { type: string }; verbosity?: string };
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: "disabled";
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

interface ItemEventBase {
  sequence_number: number;
  item_id: string;
  output_index: number;
}

/** Every streaming event the bridge emits. */
export type ResponseStreamEvent =
  | {
      type:
        | "response.created"
        | "response.in_progress"
        | "response.completed"
        | "response.incomplete"
        | "response.failed";
      sequence_number: number;
      response: ResponseObject;
    }
  | {
      type: "response.output_item.added" | "response.output_item.done";
      sequence_number: number;
      output_index: number;
      item: OutputItem;
    }
  | ({
      type: "response.content_part.added" | "response.content_part.done";
      content_index: number;
      part: OutputTextPart;
    } & ItemEventBase)
  | ({ type: "response.output_text.delta"; content_index: number; delta: string; logprobs: never[] } & ItemEventBase)
  | ({ type: "response.output_text.done"; content_index: number; text: string; logprobs: never[] } & ItemEventBase)
  | ({
      type:
        | "response.web_search_call.in_progress"
        | "response.web_search_call.searching"
        | "response.web_search_call.completed";
    } & ItemEventBase)
  | ({
      type: "response.output_text.annotation.added";
      content_index: number;
      annotation_index: number;
      annotation: UrlCitation;
    } & ItemEventBase)
  | ({ type: "response.function_call_arguments.delta"; delta: string } & ItemEventBase)
  | ({ type: "response.function_call_arguments.done"; name: string; arguments: string } & ItemEventBase)
  | ({ type: "response.custom_tool_call_input.delta"; delta: string } & ItemEventBase)
  | ({ type: "response.custom_tool_call_input.done"; input: string } & ItemEventBase)
  | ({
      type: "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done";
      summary_index: number;
      part: SummaryTextPart;
    } & ItemEventBase)
  | ({ type: "response.reasoning_summary_text.delta"; summary_index: number; delta: string } & ItemEventBase)
  | ({ type: "response.reasoning_summary_text.done"; summary_index: number; text: string } & ItemEventBase)
  | { type: "error"; sequence_number: number; code: string | null; message: string; param: string | null };
