/**
 * Response shapes of the Messages API: the non-streaming `message` object and the streaming events, exactly the
 * fields Anthropic documents (and the Anthropic SDK's stream accumulator reads).
 */

import type { WebBlocks, WebCitation } from "./web-blocks.js";

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export interface AnthropicUsage {
  /** Prompt tokens neither read from nor written to the cache, as in Anthropic's API. */
  input_tokens: number;
  output_tokens: number;
  /** Present when Cursor counted the turn (docs/protocol.md §4.6). */
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** Web searches / fetches Cursor ran for the response (present when there was any). */
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

export type ResponseContentBlock =
  | { type: "text"; text: string; citations?: WebCitation[] }
  | WebBlocks["use"]
  | { type: "web_search_tool_result" | "web_fetch_tool_result"; tool_use_id: string; content: unknown }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ResponseContentBlock[];
  stop_reason: StopReason | null;
  /** The stop sequence that ended the answer (`stop_reason` `stop_sequence`), else null. */
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** `content_block_start` carries the block in its empty form (tool_use input `{}`). */
export type StartedBlock =
  | { type: "text"; text: "" }
  | { type: "thinking"; thinking: ""; signature: "" }
  | { type: "tool_use"; id: string; name: string; input: Record<string, never> }
  | (Omit<WebBlocks["use"], "input"> & { input: Record<string, never> })
  | { type: "web_search_tool_result" | "web_fetch_tool_result"; tool_use_id: string; content: unknown };

export type BlockDelta =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "citations_delta"; citation: WebCitation };

export type StreamEvent =
  | { type: "message_start"; message: AnthropicMessage }
  | { type: "content_block_start"; index: number; content_block: StartedBlock }
  | { type: "content_block_delta"; index: number; delta: BlockDelta }
  | { type: "content_block_stop"; index: number }
  | {
      type: "message_delta";
      delta: { stop_reason: StopReason; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: "message_stop" }
  | { type: "ping" };

/** `GET /v1/models` entry in Anthropic's shape. */
export interface AnthropicModel {
  type: "model";
  id: string;
  display_name: string;
  /** RFC 3339. */
  created_at: string;
  /** The model's context window in tokens (the `context_window` of the OpenAI-shaped list). */
  max_input_tokens: number;
}

export interface AnthropicModelList {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** `POST /v1/messages/count_tokens`. */
export interface CountTokensResponse {
  input_tokens: number;
}
