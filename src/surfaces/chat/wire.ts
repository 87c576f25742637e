/**
 * Response shapes of `/v1/chat/completions`, exactly as OpenAI sends them (openai-node's `ChatCompletion` and
 * `ChatCompletionChunk`), plus the non-standard `reasoning_content` field that DeepSeek-style clients and
 * `@ai-sdk/openai-compatible` read as reasoning.
 */

/** Why the model stopped. */
export type FinishReason = "stop" | "length" | "tool_calls";

/** Token counts in OpenAI's naming. */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Present when Cursor counted the turn (docs/protocol.md §4.6). */
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** One tool call fragment in a streamed delta; `id`, `type` and `function.name` only on the first for an index. */
export interface ChatCompletionChunkToolCall {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

/** The delta of one streamed choice. */
export interface ChatCompletionChunkDelta {
  role?: "assistant";
  content?: string;
  reasoning_content?: string;
  tool_calls?: ChatCompletionChunkToolCall[];
  /** Web search results the content cites (issue #27); sent once, in the final delta. */
  annotations?: UrlCitationAnnotation[];
}

/** A `url_citation` annotation: a web search result whose URL the content names. */
export interface UrlCitationAnnotation {
  type: "url_citation";
  url_citation: { start_index: number; end_index: number; url: string; title: string };
}

/** One streamed choice. */
export interface ChatCompletionChunkChoice {
  index: number;
  delta: ChatCompletionChunkDelta;
  finish_reason: FinishReason | null;
  logprobs: null;
}

/** One `data:` frame of a streamed completion. The usage chunk has `choices: []`. */
export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  usage?: CompletionUsage | null;
  system_fingerprint?: string;
}

/** A complete tool call in a non-streamed message. */
export interface ChatCompletionMessageToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The assistant message of a non-streamed completion. `content` is null when only tool calls were made. */
export interface ChatCompletionMessage {
  role: "assistant";
  content: string | null;
  refusal: null;
  reasoning_content?: string;
  tool_calls?: ChatCompletionMessageToolCall[];
  annotations?: UrlCitationAnnotation[];
}

/** One non-streamed choice. */
export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  finish_reason: FinishReason;
  logprobs: null;
}

/** A non-streamed completion. */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage: CompletionUsage;
  system_fingerprint?: string;
}
