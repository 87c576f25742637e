/**
 * Engine events → Chat Completions, on the kit's translation contract (kit/translate.ts): the chunk stream and,
 * from the same state, the non-streaming `chat.completion`, so the two can never disagree. The chunks follow the SSE
 * contract `@ai-sdk/openai-compatible` and openai-node rely on: a `role: "assistant"` delta first, tool calls with
 * `index`, `id` and `function.name` on their first delta and their arguments in pieces as Cursor forms them, a final
 * chunk with `finish_reason`, then (if asked) a usage chunk with `choices: []`.
 */
import type { TurnEndReason, Usage, WebReference } from "../../backend/types.js";
/** Where reasoning goes: the `reasoning_content` delta field, `<think>…</think>` inside `content`, or nowhere. */
import type { ReasoningOutput } from "../kit/deps.js";
import { type OpenAIErrorBody, toOpenAIError } from "../kit/openai-error.js";
import { encodeSseData, SSE_DONE } from "../kit/sse.js";
import { type EventHandlers, restOf, type StreamWire, type Translation } from "../kit/translate.js";
import { citedReferences } from "../kit/web-citations.js";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionChunkDelta,
  ChatCompletionMessage,
  ChatCompletionMessageToolCall,
  CompletionUsage,
  FinishReason,
  UrlCitationAnnotation,
} from "./wire.js";

export type { ReasoningOutput };

/** A frame of the chat stream: a chunk, or the error frame of a failure after the first byte. */
export type ChatFrame = ChatCompletionChunk | OpenAIErrorBody;

/** Options of {@link chatTranslation}; ids and clock are injected so output is deterministic. */
export interface ChatTranslationOptions {
  /** Completion id shared by every chunk, e.g. `chatcmpl-<random>`. */
  id: string;
  /** Unix seconds shared by every chunk. */
  created: number;
  /** The model the response names (the Cursor model that served). */
  model: string;
  reasoning: ReasoningOutput;
  /** Emit the usage chunk after the final chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  systemFingerprint?: string;
}

/** The chat stream's bytes: `data: <json>` frames, then `data: [DONE]`. */
export const CHAT_WIRE: StreamWire<ChatFrame> = {
  encode: (frame) => (frame instanceof ContentChunk ? frame.sse() : encodeSseData(frame)),
  end: SSE_DONE,
};

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

/** `url_citation`s for the content: each search result whose URL it names. */
function urlCitations(content: string, references: readonly WebReference[]): UrlCitationAnnotation[] {
  return citedReferences(content, references).map(({ reference, start, end }) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: reference.url, title: reference.title },
  }));
}

/** Chunk objects share everything but `choices` (and `usage` on the last one). */
type ChunkBase = Omit<ChatCompletionChunk, "choices" | "usage">;

/**
 * A chunk: the base's fields, then `choices`, in the order `{ ...base, choices }` writes them. Written out because a
 * key added to a spread copy costs a fresh hidden class, about 0.5 KB per chunk (docs/performance.md, "Where serve's
 * CPU per request goes").
 */
function chunkOf(base: ChunkBase, choices: ChatCompletionChunk["choices"]): ChatCompletionChunk {
  const { id, object, created, model, system_fingerprint } = base;
  return system_fingerprint === undefined
    ? { id, object, created, model, choices }
    : { id, object, created, model, system_fingerprint, choices };
}

/**
 * The SSE frame of a content-only delta chunk around its text: `data: {<base>,"choices":[{"index":0,"delta":{"content":`
 * and `},"finish_reason":null,"logprobs":null}]}` + a blank line. What `JSON.stringify` writes for the chunk object,
 * since the base's keys come first and the text is the only part that changes (docs/performance.md, "The per-chunk
 * path").
 */
class ContentTemplate {
  readonly prefix: string;
  readonly suffix = '},"finish_reason":null,"logprobs":null}]}\n\n';
  constructor(base: ChunkBase) {
    this.prefix = `data: ${JSON.stringify(base).slice(0, -1)},"choices":[{"index":0,"delta":{"content":`;
  }
}

/**
 * A content-only delta chunk: the same object as any chunk (its fields, in the same order), encoded from its stream's
 * template instead of stringifying the whole object per chunk, the bulk of a stream.
 */
class ContentChunk implements ChatCompletionChunk {
  readonly id: string;
  readonly object = "chat.completion.chunk" as const;
  readonly created: number;
  readonly model: string;
  readonly system_fingerprint?: string;
  readonly choices: ChatCompletionChunk["choices"];
  readonly #template: ContentTemplate;
  readonly #text: string;

  constructor(base: ChunkBase, template: ContentTemplate, text: string) {
    this.id = base.id;
    this.created = base.created;
    this.model = base.model;
    if (base.system_fingerprint !== undefined) this.system_fingerprint = base.system_fingerprint;
    this.choices = [{ index: 0, delta: { content: text }, finish_reason: null, logprobs: null }];
    this.#template = template;
    this.#text = text;
  }

  /** This chunk's SSE frame, byte for byte `encodeSseData(this)`. */
  sse(): string {
    return this.#template.prefix + JSON.stringify(this.#text) + this.#template.suffix;
  }
}

/** The state of one chat answer. */
class ChatTranslation implements Translation<ChatFrame, ChatCompletion> {
  private content = "";
  private reasoningText = "";
  private thinkOpen = false;
  private finishReason: FinishReason | undefined;
  private usage: Usage | undefined;
  private annotations: UrlCitationAnnotation[] = [];
  private readonly toolCalls: ChatCompletionMessageToolCall[] = [];
  /** Index of each call by id (calls may interleave). */
  private readonly callIndex = new Map<string, number>();
  /** Results of the turn's web searches: content naming one of their URLs cites it. */
  private readonly references: WebReference[] = [];
  private readonly base: ChunkBase;
  private readonly template: ContentTemplate;

  constructor(private readonly options: ChatTranslationOptions) {
    const { id, created, model, systemFingerprint } = options;
    const object = "chat.completion.chunk" as const;
    this.base =
      systemFingerprint === undefined
        ? { id, object, created, model }
        : { id, object, created, model, system_fingerprint: systemFingerprint };
    this.template = new ContentTemplate(this.base);
  }

  private chunk(delta: ChatCompletionChunkDelta, finishReason?: FinishReason): ChatCompletionChunk {
    return chunkOf(this.base, [{ index: 0, delta, finish_reason: finishReason ?? null, logprobs: null }]);
  }

  private text(text: string, emit: (frame: ChatFrame) => void): void {
    this.content += text;
    emit(new ContentChunk(this.base, this.template, text));
  }

  private closeThink(emit: (frame: ChatFrame) => void): void {
    if (!this.thinkOpen) return;
    this.thinkOpen = false;
    this.text("</think>\n\n", emit);
  }

  /** Opens a call at the next index with its first piece of arguments. */
  private openCall(id: string, name: string, args: string, emit: (frame: ChatFrame) => void): void {
    this.closeThink(emit);
    const index = this.toolCalls.length;
    this.callIndex.set(id, index);
    this.toolCalls.push({ id, type: "function", function: { name, arguments: args } });
    emit(this.chunk({ tool_calls: [{ index, id, type: "function", function: { name, arguments: args } }] }));
  }

  private moreArguments(id: string, piece: string, emit: (frame: ChatFrame) => void): void {
    const index = this.callIndex.get(id);
    const call = index === undefined ? undefined : this.toolCalls[index];
    if (index === undefined || call === undefined || piece === "") return;
    call.function.arguments += piece;
    emit(this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }

  private toFinishReason(reason: TurnEndReason): FinishReason {
    // Tool calls must end with "tool_calls" or clients never run them, whatever reason the backend gave.
    if (reason === "tool-calls" || (reason === "stop" && this.toolCalls.length > 0)) return "tool_calls";
    return reason;
  }

  start(emit: (frame: ChatFrame) => void): void {
    emit(this.chunk({ role: "assistant", content: "" }));
  }

  readonly on: EventHandlers<ChatFrame> = {
    "text-delta": (event, emit) => {
      if (event.text === "") return;
      this.closeThink(emit);
      this.text(event.text, emit);
    },
    "reasoning-delta": (event, emit) => {
      const mode = this.options.reasoning;
      if (event.text === "" || mode === "none") return;
      if (mode === "reasoning_content") {
        this.reasoningText += event.text;
        emit(this.chunk({ reasoning_content: event.text }));
        return;
      }
      const opening = this.thinkOpen ? "" : "<think>";
      this.thinkOpen = true;
      this.text(opening + event.text, emit);
    },
    "reasoning-end": (_event, emit) => this.closeThink(emit),
    "tool-call-delta": (event, emit) => {
      if (event.first) this.openCall(event.toolCallId, event.toolName, event.delta, emit);
      else this.moreArguments(event.toolCallId, event.delta, emit);
    },
    "tool-call": (event, emit) => {
      if (!event.streamed) {
        this.openCall(event.toolCallId, event.toolName, event.arguments, emit);
        return;
      }
      this.moreArguments(event.toolCallId, restOf(event), emit);
    },
    "web-search": (event) => {
      if (event.status === "completed") this.references.push(...event.references);
    },
    usage: (event) => {
      this.usage = event.usage;
    },
    "turn-end": (event, emit) => {
      this.closeThink(emit);
      this.finishReason = this.toFinishReason(event.reason);
      this.annotations = urlCitations(this.content, this.references);
      emit(this.chunk(this.annotations.length > 0 ? { annotations: this.annotations } : {}, this.finishReason));
    },
  };

  finish(emit: (frame: ChatFrame) => void): void {
    if (this.options.includeUsage) {
      const last = chunkOf(this.base, []);
      last.usage = toCompletionUsage(this.usage);
      emit(last);
    }
  }

  fail(error: unknown, context: Parameters<typeof toOpenAIError>[1], emit: (frame: ChatFrame) => void): void {
    emit(toOpenAIError(error, context).body);
  }

  /** The non-streaming completion (content null when only tool calls were made). */
  result(): ChatCompletion {
    const { options } = this;
    const message: ChatCompletionMessage = {
      role: "assistant",
      content: this.content === "" && this.toolCalls.length > 0 ? null : this.content,
      refusal: null,
    };
    if (options.reasoning === "reasoning_content" && this.reasoningText !== "") {
      message.reasoning_content = this.reasoningText;
    }
    if (this.toolCalls.length > 0) message.tool_calls = this.toolCalls;
    if (this.annotations.length > 0) message.annotations = this.annotations;
    return {
      id: options.id,
      object: "chat.completion",
      created: options.created,
      model: options.model,
      choices: [{ index: 0, message, finish_reason: this.finishReason ?? "stop", logprobs: null }],
      usage: toCompletionUsage(this.usage),
      ...(options.systemFingerprint === undefined ? {} : { system_fingerprint: options.systemFingerprint }),
    };
  }
}

/** A fresh translation of one chat answer. */
export function chatTranslation(options: ChatTranslationOptions): Translation<ChatFrame, ChatCompletion> & {
  result(): ChatCompletion;
} {
  return new ChatTranslation(options);
}
