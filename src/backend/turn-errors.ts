/**
 * What a failed turn means once the request is known (cursor-protocol-addendum-3.md E2): Cursor answers a context
 * overflow and a model the plan cannot use with the same bare `resource_exhausted` "Error", and names neither the
 * request's size nor the model. The error mapping (protocol/cursor/error-mapping.ts) marks such an answer
 * `resource_exhausted`; here, before any output, a request of at least half the model's window makes it a context
 * overflow (which clients fix by compacting), a smaller one a model not available on the plan (which they fix by
 * picking another). Every context overflow gets the request's size and the window, which each door names in the
 * "too long" wording its clients recognise; every model refusal names the model.
 */
import { contextWindowFor } from "../util/context-window.js";
import { type ContextLength, ProxyError } from "../util/errors.js";
import { CHARS_PER_TOKEN, IMAGE_TOKENS } from "../util/token-estimate.js";
import type { ClientTool, HistoryMessage } from "./types.js";

/** What the history adds to {@link estimateWithTools}: a turn keeps it, since it releases its history. */
export interface HistorySize {
  chars: number;
  images: number;
}

/** The history's part of {@link estimateWithTools} (a walk over lengths, cheap). */
export function historySize(messages: readonly HistoryMessage[]): HistorySize {
  let chars = 0;
  let images = 0;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === "assistant") {
      for (const call of message.toolCalls) chars += call.name.length + call.arguments.length;
    } else if (message.role === "user") images += message.images?.length ?? 0;
  }
  return { chars, images };
}

/**
 * The request's size in tokens, estimated from the history's size (text, tool calls, images) and the tool
 * definitions: serialising every tool's schema is left to
 * when a failure needs the estimate, not done before every Run (a coding agent sends thirty schemas).
 */
export function estimateWithTools(history: HistorySize, tools: readonly ClientTool[]): number {
  let chars = history.chars;
  for (const tool of tools)
    chars += tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + history.images * IMAGE_TOKENS;
}

/** What {@link classifyTurnError} needs to know about the turn. */
export interface TurnErrorContext {
  /** The model the caller asked for. */
  model: string;
  /** {@link estimateWithTools} of the request. */
  estimatedTokens: number;
  /** Whether the turn has yielded output (text, reasoning or tool calls) to the caller. */
  outputStarted: boolean;
}

/** A failed turn's error, reclassified by kind where the request decides it; anything else unchanged. */
export function classifyTurnError(error: ProxyError, ctx: TurnErrorContext): ProxyError {
  const limit = contextWindowFor(ctx.model);
  const size: ContextLength = { tokens: ctx.estimatedTokens, limit };
  if (error.detail === "resource_exhausted" && !ctx.outputStarted) {
    return ctx.estimatedTokens * 2 >= limit ? contextOverflow(error, size) : modelNotAvailable(error, ctx.model);
  }
  if (error.code === "context_length_exceeded" && error.contextLength === undefined) {
    return contextOverflow(error, size);
  }
  if (error.detail === "model_not_available") return modelNotAvailable(error, ctx.model);
  return error;
}

function contextOverflow(error: ProxyError, size: ContextLength): ProxyError<"context_length_exceeded"> {
  const detail = error.code === "context_length_exceeded" ? error.detail : "context_overflow";
  return new ProxyError(
    "context_length_exceeded",
    `The conversation is too long for the model: about ${size.tokens} tokens, over what the model takes ` +
      `(${size.limit} tokens at most). Compact or shorten the conversation and try again. Upstream: ${error.message}`,
    {
      cause: error,
      retryable: false,
      contextLength: size,
      detail: detail as "context_overflow" | "max_tokens" | "conversation_too_long",
    },
  );
}

function modelNotAvailable(error: ProxyError, model: string): ProxyError<"permission_denied"> {
  return new ProxyError(
    "permission_denied",
    `The model ${model} is not available on this Cursor plan or in this region. Pick another model ` +
      `(GET /v1/models lists them). Upstream: ${error.message}`,
    { cause: error, retryable: false, param: "model", detail: "model_not_available" },
  );
}

/**
 * The error of a turn its caller aborted: the caller's own reason when it gave one other than a cancel (a stopping
 * server's shutdown notice, util/shutdown-notice.ts, which the client must see as such), else a cancel.
 */
export function canceledBy(signal: AbortSignal, cause: unknown): ProxyError {
  const reason: unknown = signal.reason;
  if (reason instanceof ProxyError && reason.code !== "canceled") return reason;
  return new ProxyError("canceled", "The turn was canceled.", { cause });
}
