/**
 * BackendEvent stream → ChatCompletionChunk stream. One explicit state object and one small
 * handler per event kind, as copilot-api's translator does. The chunk sequence follows the SSE contract that
 * `@ai-sdk/openai-compatible` and openai-node rely on: a `role: "assistant"` delta first, tool calls with `index`,
 * `id` and `function.name` on their first delta, a final chunk with `finish_reason`, then (if asked) a usage chunk
 * with `choices: []`. Errors thrown by the source propagate unchanged; the SSE edge turns them into the error frame.
 */
import type {
  BackendEvent,
  HistoryMessage,
  HistoryToolCall,
  TurnEndReason,
  Usage,
  WebReference,
} from "../../backend/types.js";
/** Where reasoning goes: the `reasoning_content` delta field, `<think>…</think>` inside `content`, or nowhere. */
import type { ReasoningOutput } from "../kit/deps.js";
import { turnNeverEnded } from "../kit/run-surface.js";
import { citedReferences } from "../kit/web-citations.js";
import type {
  ChatCompletionChunk,
  ChatCompletionChunkDelta,
  CompletionUsage,
  FinishReason,
  UrlCitationAnnotation,
} from "./wire.js";

export type { ReasoningOutput };

/** What the translator saw, for the server to store (fingerprint of history + reply, checkpoint id). */
export interface TurnSummary {
  /** The reply as the client will echo it back: content as sent (think tags included) and the tool calls. */
  message: Extract<HistoryMessage, { role: "assistant" }>;
  finishReason: FinishReason;
  /** The last usage event, if any. */
  usage: Usage | undefined;
  /** The last `checkpoint` event's conversation id, if any. */
  conversationId: string | undefined;
}

/** Options for {@link toChatCompletionChunks}; ids and clock are injected so output is deterministic. */
export interface ChunkStreamOptions {
  /** Completion id shared by every chunk, e.g. `chatcmpl-<random>`. */
  id: string;
  /** Unix seconds shared by every chunk. */
  created: number;
  /** The model the response names (the Cursor model that served). */
  model: string;
  reasoning: ReasoningOutput;
  /** Emit the usage chunk after the final chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Split tool-call arguments into pieces of at most this many code points; unset or 0: one piece. */
  toolArgumentsChunkSize?: number;
  systemFingerprint?: string;
  /** Called once when the source completes after a `turn-end`, before the usage chunk. */
  onFinish?: (summary: TurnSummary) => void;
}

interface StreamState {
  toolCalls: HistoryToolCall[];
  content: string;
  thinkOpen: boolean;
  finishReason: FinishReason | undefined;
  usage: Usage | undefined;
  conversationId: string | undefined;
  /** Results of the turn's web searches: content naming one of their URLs cites it. */
  references: WebReference[];
}

type Emit = (delta: ChatCompletionChunkDelta, finishReason?: FinishReason) => void;

/**
 * Converts backend usage into OpenAI's field names; Cursor's own counts (docs/protocol.md §4.6) add the cached and
 * reasoning breakdown (both already part of the prompt and completion totals, as in OpenAI's API).
 */
export function toCompletionUsage(usage: Usage | undefined): CompletionUsage {
  const out: CompletionUsage = {
    prompt_tokens: usage?.inputTokens ?? 0,
    completion_tokens: usage?.outputTokens ?? 0,
    total_tokens: usage?.totalTokens ?? 0,
  };
  if (usage?.source === "cursor") {
    out.prompt_tokens_details = { cached_tokens: usage.cacheReadTokens ?? 0 };
    out.completion_tokens_details = { reasoning_tokens: usage.reasoningTokens ?? 0 };
  }
  return out;
}

/** Splits text into pieces of at most `size` code points, never inside a surrogate pair. */
export function splitCodePoints(text: string, size: number | undefined): string[] {
  if (size === undefined || size <= 0 || text.length <= size) return [text];
  const codePoints = Array.from(text);
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size)
    pieces.push(codePoints.slice(start, start + size).join(""));
  return pieces;
}

function emitContent(state: StreamState, emit: Emit, text: string): void {
  state.content += text;
  emit({ content: text });
}

function closeThink(state: StreamState, emit: Emit): void {
  if (!state.thinkOpen) return;
  state.thinkOpen = false;
  emitContent(state, emit, "</think>\n\n");
}

function onTextDelta(state: StreamState, emit: Emit, text: string): void {
  if (text === "") return;
  closeThink(state, emit);
  emitContent(state, emit, text);
}

function onReasoningDelta(state: StreamState, emit: Emit, text: string, mode: ReasoningOutput): void {
  if (text === "" || mode === "none") return;
  if (mode === "reasoning_content") {
    emit({ reasoning_content: text });
    return;
  }
  const opening = state.thinkOpen ? "" : "<think>";
  state.thinkOpen = true;
  emitContent(state, emit, opening + text);
}

function onToolCall(
  state: StreamState,
  emit: Emit,
  event: Extract<BackendEvent, { type: "tool-call" }>,
  chunkSize: number | undefined,
): void {
  closeThink(state, emit);
  const index = state.toolCalls.length;
  // An empty arguments string is not parseable JSON; clients expect an object (the AI SDK parses it).
  const args = event.arguments === "" ? "{}" : event.arguments;
  state.toolCalls.push({ id: event.toolCallId, name: event.toolName, arguments: args });
  splitCodePoints(args, chunkSize).forEach((piece, pieceIndex) => {
    const call =
      pieceIndex === 0
        ? {
            index,
            id: event.toolCallId,
            type: "function" as const,
            function: { name: event.toolName, arguments: piece },
          }
        : { index, function: { arguments: piece } };
    emit({ tool_calls: [call] });
  });
}

function toFinishReason(reason: TurnEndReason, state: StreamState): FinishReason {
  // Tool calls must end with "tool_calls" or clients never run them, whatever reason the backend gave.
  if (reason === "tool-calls" || (reason === "stop" && state.toolCalls.length > 0)) return "tool_calls";
  return reason;
}

/** `url_citation`s for the content: each search result whose URL it names. */
function urlCitations(content: string, references: readonly WebReference[]): UrlCitationAnnotation[] {
  return citedReferences(content, references).map(({ reference, start, end }) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: reference.url, title: reference.title },
  }));
}

function onTurnEnd(state: StreamState, emit: Emit, reason: TurnEndReason): void {
  closeThink(state, emit);
  state.finishReason = toFinishReason(reason, state);
  const annotations = urlCitations(state.content, state.references);
  emit(annotations.length > 0 ? { annotations } : {}, state.finishReason);
}

/** Applies one event to the state, emitting the chunks it produces. Events after `turn-end` only update usage. */
function handleEvent(state: StreamState, emit: Emit, event: BackendEvent, options: ChunkStreamOptions): void {
  if (state.finishReason !== undefined && event.type !== "usage" && event.type !== "checkpoint") return;
  switch (event.type) {
    case "text-delta":
      onTextDelta(state, emit, event.text);
      break;
    case "reasoning-delta":
      onReasoningDelta(state, emit, event.text, options.reasoning);
      break;
    case "reasoning-end":
      closeThink(state, emit);
      break;
    case "tool-call":
      onToolCall(state, emit, event, options.toolArgumentsChunkSize);
      break;
    case "usage":
      state.usage = event.usage;
      break;
    case "checkpoint":
      state.conversationId = event.conversationId;
      break;
    case "turn-end":
      onTurnEnd(state, emit, event.reason);
      break;
    case "web-search":
      if (event.status === "completed") state.references.push(...event.references);
      break;
    case "web-fetch":
      break;
  }
}

/** Chunk objects share everything but `choices` (and `usage` on the last one). */
type ChunkBase = Omit<ChatCompletionChunk, "choices" | "usage">;

const DONE: IteratorResult<ChatCompletionChunk> = { done: true, value: undefined };

/**
 * The translation as a plain async iterator, not an async generator: it sits on the per-event hot path, and a
 * generator costs several promise hops per event. Chunks already produced are handed out without touching the source.
 */
class ChunkIterator implements AsyncIterator<ChatCompletionChunk> {
  private readonly state: StreamState = {
    toolCalls: [],
    content: "",
    thinkOpen: false,
    finishReason: undefined,
    usage: undefined,
    conversationId: undefined,
    references: [],
  };
  private readonly pending: ChatCompletionChunk[] = [];
  private readonly source: AsyncIterator<BackendEvent>;
  /** The source completed or failed, or the reader stopped: nothing more is read from it. */
  private sourceDone = false;
  private finished = false;
  private readonly emit: Emit;

  constructor(
    events: AsyncIterable<BackendEvent>,
    private readonly options: ChunkStreamOptions,
    private readonly base: ChunkBase,
  ) {
    this.source = events[Symbol.asyncIterator]();
    this.emit = (delta, finishReason) =>
      this.pending.push({
        ...base,
        choices: [{ index: 0, delta, finish_reason: finishReason ?? null, logprobs: null }],
      });
    this.emit({ role: "assistant", content: "" });
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    const chunk = this.pending.shift();
    if (chunk !== undefined) return Promise.resolve({ done: false, value: chunk });
    if (this.finished) return Promise.resolve(DONE);
    return this.read();
  }

  /** Stopping early releases the source (its `return()`), as leaving a `for await` over it would. */
  async return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.finished = true;
    this.pending.length = 0;
    if (!this.sourceDone) {
      this.sourceDone = true;
      await this.source.return?.();
    }
    return DONE;
  }

  /** Reads the source until it produced a chunk (most events produce one at once: one promise per chunk). */
  private read(): Promise<IteratorResult<ChatCompletionChunk>> {
    return this.source.next().then(this.onResult, this.onError);
  }

  private readonly onResult = (
    result: IteratorResult<BackendEvent>,
  ): IteratorResult<ChatCompletionChunk> | Promise<IteratorResult<ChatCompletionChunk>> => {
    try {
      if (result.done === true) {
        this.sourceDone = true;
        this.end();
        // Whatever end() queued is handed out by next(); nothing more is read.
        this.finished = true;
      } else handleEvent(this.state, this.emit, result.value, this.options);
    } catch (error) {
      return this.onError(error);
    }
    const chunk = this.pending.shift();
    if (chunk !== undefined) return { done: false, value: chunk };
    if (this.finished) return DONE;
    return this.read();
  };

  /** The source's own error (or the missing turn-end) ends the stream; the source is not asked for more. */
  private readonly onError = (error: unknown): never => {
    this.sourceDone = true;
    this.finished = true;
    throw error;
  };

  private end(): void {
    const { state, options } = this;
    if (state.finishReason === undefined) throw turnNeverEnded();
    options.onFinish?.({
      message: { role: "assistant", content: state.content, toolCalls: state.toolCalls },
      finishReason: state.finishReason,
      usage: state.usage,
      conversationId: state.conversationId,
    });
    if (options.includeUsage) this.pending.push({ ...this.base, choices: [], usage: toCompletionUsage(state.usage) });
  }
}

/**
 * Translates one backend segment into chunks. The finish chunk goes out as soon as `turn-end` arrives; the source
 * is then drained (a backend segment ends right after `turn-end`) so a late usage event still counts. A source
 * that ends without `turn-end` is a `backend_protocol` error. Stopping early calls the source's `return()`.
 */
export function toChatCompletionChunks(
  events: AsyncIterable<BackendEvent>,
  options: ChunkStreamOptions,
): AsyncIterable<ChatCompletionChunk> {
  const base: ChunkBase = {
    id: options.id,
    object: "chat.completion.chunk" as const,
    created: options.created,
    model: options.model,
    ...(options.systemFingerprint === undefined ? {} : { system_fingerprint: options.systemFingerprint }),
  };
  return { [Symbol.asyncIterator]: () => new ChunkIterator(events, options, base) };
}
