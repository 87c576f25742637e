/**
 * Engine events → Anthropic Messages streaming events, on the kit's translation contract (kit/translate.ts); the
 * non-streaming `message` is folded from the same events. Block order follows the turn: thinking (closed with its
 * `signature_delta`), text, tool_use (its `input_json_delta` pieces as Cursor forms the arguments), server tool
 * blocks for web searches and fetches.
 */

import type { TurnEndReason, Usage, WebReference } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import { namedEventFrame } from "../../util/pull-body.js";
import type { ErrorContext } from "../kit/error-policy.js";
import { type Emit, type EventHandlers, restOf, type StreamWire, type Translation } from "../kit/translate.js";
import { type AnthropicErrorBody, toAnthropicError } from "./error-body.js";
import { toAnthropicToolId } from "./ids.js";
import { citationsFor, webBlocks } from "./web-blocks.js";
import type { AnthropicMessage, AnthropicUsage, ResponseContentBlock, StopReason, StreamEvent } from "./wire.js";

/** A frame of the Messages stream: an event, or the `error` event of a failure after the first byte. */
export type MessagesFrame = StreamEvent | AnthropicErrorBody;

export interface AnthropicEventOptions {
  /** `msg_…` id of the response. */
  id: string;
  /** The model id echoed back (the one the client asked for). */
  model: string;
  /** Whether the client asked for thinking; reasoning events are dropped otherwise. */
  reasoning: boolean;
  /** Signs a finished thinking block's text; the result is the block's opaque `signature`. */
  sign: (thinking: string) => string;
  /** The stop sequence that ended the answer, if one did (read when the turn ends). */
  stopSequence?: (() => string | undefined) | undefined;
  /**
   * The request's input tokens by the kit's estimate (`ServedTurn.inputTokens`), read once when the stream starts:
   * `message_start` reports it (Cursor counts the input only when the turn ends), and `message_delta` reports the
   * usage that follows: Cursor's count, or an estimate, which has this same input when it has no figure of its own.
   */
  inputEstimate?: (() => number) | undefined;
}

/** Every event is `event: <type>\ndata: <json>`; while the turn is silent for `pingIntervalMs`, a `ping` (as
 * Anthropic does: it keeps proxies and clients with idle timeouts from cutting a long thinking pause). */
export function messagesWire(pingIntervalMs: number): StreamWire<MessagesFrame> {
  return {
    encode: namedEventFrame,
    end: "",
    ping: { frame: namedEventFrame({ type: "ping" }), intervalMs: pingIntervalMs },
  };
}

const STOP_REASON: Record<TurnEndReason, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  "tool-calls": "tool_use",
};

function parseArguments(text: string, toolName: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text === "" ? "{}" : text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new ProxyError(
    "backend_protocol",
    `The model's call to tool '${toolName}' carried arguments that are not a JSON object.`,
  );
}

/**
 * Backend usage in Anthropic's naming: `input_tokens` excludes cache reads and writes, which Cursor's own counts
 * (docs/protocol.md §4.6) report separately.
 */
export function toAnthropicUsage(usage: Usage): AnthropicUsage {
  if (usage.source !== "cursor") return { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens };
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheWrite,
  };
}

type Frame = Emit<MessagesFrame>;

/** The state of one Messages answer. */
class MessagesTranslation implements Translation<MessagesFrame, AnthropicMessage> {
  private readonly usage: AnthropicUsage = { input_tokens: 0, output_tokens: 0 };
  private index = -1;
  private open: { kind: "text" | "thinking"; text: string } | undefined;
  private stop: StopReason | undefined;
  /** The block index of each tool call whose arguments are streaming (calls may interleave). */
  private readonly toolBlocks = new Map<string, number>();
  /** Results of the turn's searches so far: text that names one of their URLs cites it. */
  private readonly references: WebReference[] = [];
  private readonly web = { web_search_requests: 0, web_fetch_requests: 0 };
  /** The folded message (non-streaming). */
  private message: AnthropicMessage | undefined;
  private readonly content: ResponseContentBlock[] = [];
  private readonly json = new Map<number, string>();

  constructor(private readonly options: AnthropicEventOptions) {}

  start(emit: Frame): void {
    const { id, model, inputEstimate } = this.options;
    if (inputEstimate !== undefined) this.usage.input_tokens = inputEstimate();
    const message = { id, type: "message" as const, role: "assistant" as const, model, content: [] };
    emit({
      type: "message_start",
      message: { ...message, stop_reason: null, stop_sequence: null, usage: { ...this.usage } },
    });
  }

  private close(emit: Frame): void {
    const open = this.open;
    if (open === undefined) return;
    const index = this.index;
    if (open.kind === "text") {
      for (const citation of citationsFor(open.text, this.references)) {
        emit({ type: "content_block_delta", index, delta: { type: "citations_delta", citation } });
      }
    } else {
      emit({
        type: "content_block_delta",
        index,
        delta: { type: "signature_delta", signature: this.options.sign(open.text) },
      });
    }
    emit({ type: "content_block_stop", index });
    this.open = undefined;
  }

  private openBlock(kind: "text" | "thinking", emit: Frame): void {
    if (this.open?.kind === kind) return;
    this.close(emit);
    this.open = { kind, text: "" };
    const block =
      kind === "text"
        ? { type: "text" as const, text: "" as const }
        : { type: "thinking" as const, thinking: "" as const, signature: "" as const };
    emit({ type: "content_block_start", index: ++this.index, content_block: block });
  }

  /** Opens a tool_use block (its input arrives as `input_json_delta` pieces). */
  private openTool(id: string, name: string, emit: Frame): number {
    this.close(emit);
    const index = ++this.index;
    emit({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: toAnthropicToolId(id), name, input: {} },
    });
    return index;
  }

  private inputJson(index: number, json: string, emit: Frame): void {
    if (json !== "")
      emit({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } });
  }

  readonly on: EventHandlers<MessagesFrame> = {
    "text-delta": (event, emit) => {
      if (event.text === "") return;
      this.openBlock("text", emit);
      if (this.open !== undefined) this.open.text += event.text;
      emit({ type: "content_block_delta", index: this.index, delta: { type: "text_delta", text: event.text } });
    },
    "reasoning-delta": (event, emit) => {
      if (!this.options.reasoning || event.text === "") return;
      this.openBlock("thinking", emit);
      if (this.open !== undefined) this.open.text += event.text;
      emit({ type: "content_block_delta", index: this.index, delta: { type: "thinking_delta", thinking: event.text } });
    },
    "reasoning-end": (_event, emit) => {
      if (this.open?.kind === "thinking") this.close(emit);
    },
    "tool-call-delta": (event, emit) => {
      const index = event.first
        ? this.openTool(event.toolCallId, event.toolName, emit)
        : this.toolBlocks.get(event.toolCallId);
      if (index === undefined) return;
      this.toolBlocks.set(event.toolCallId, index);
      this.inputJson(index, event.delta, emit);
    },
    "tool-call": (event, emit) => {
      const input = parseArguments(event.arguments, event.toolName);
      const streamed = this.toolBlocks.get(event.toolCallId);
      this.toolBlocks.delete(event.toolCallId);
      if (streamed !== undefined) {
        this.inputJson(streamed, restOf(event), emit);
        emit({ type: "content_block_stop", index: streamed });
        return;
      }
      const index = this.openTool(event.toolCallId, event.toolName, emit);
      this.inputJson(index, JSON.stringify(input), emit);
      emit({ type: "content_block_stop", index });
    },
    "web-search": (event, emit) => this.webCall(event, emit),
    "web-fetch": (event, emit) => this.webCall(event, emit),
    usage: (event) => {
      Object.assign(this.usage, toAnthropicUsage(event.usage));
    },
    "turn-end": (event) => {
      this.stop = STOP_REASON[event.reason];
    },
  };

  private webCall(event: Parameters<typeof webBlocks>[0], emit: Frame): void {
    this.close(emit);
    const blocks = webBlocks(event);
    emit({ type: "content_block_start", index: ++this.index, content_block: { ...blocks.use, input: {} } });
    this.inputJson(this.index, JSON.stringify(blocks.use.input), emit);
    emit({ type: "content_block_stop", index: this.index });
    emit({ type: "content_block_start", index: ++this.index, content_block: blocks.result });
    emit({ type: "content_block_stop", index: this.index });
    if (event.status === "completed" && event.type === "web-search") {
      this.web.web_search_requests++;
      this.references.push(...event.references);
    } else if (event.status === "completed") this.web.web_fetch_requests++;
  }

  finish(emit: Frame): void {
    this.close(emit);
    const usage = this.usage;
    if (this.web.web_search_requests + this.web.web_fetch_requests > 0) usage.server_tool_use = this.web;
    const sequence = this.options.stopSequence?.();
    const delta =
      sequence === undefined
        ? { stop_reason: this.stop ?? "end_turn", stop_sequence: null }
        : { stop_reason: "stop_sequence" as const, stop_sequence: sequence };
    emit({ type: "message_delta", delta, usage });
    emit({ type: "message_stop" });
  }

  fail(error: unknown, context: ErrorContext, emit: Frame): void {
    emit(toAnthropicError(error, context).body);
  }

  /** Folds one streamed event into the non-streaming message. */
  collect(event: MessagesFrame): void {
    const { content, json } = this;
    if (event.type === "message_start") this.message = event.message;
    else if (event.type === "content_block_start") content[event.index] = { ...event.content_block };
    else if (event.type === "content_block_delta") {
      const block = content[event.index];
      const delta = event.delta;
      if (block?.type === "text" && delta.type === "text_delta") block.text += delta.text;
      else if (block?.type === "thinking" && delta.type === "thinking_delta") block.thinking += delta.thinking;
      else if (block?.type === "thinking" && delta.type === "signature_delta") block.signature = delta.signature;
      else if (block?.type === "text" && delta.type === "citations_delta")
        block.citations = [...(block.citations ?? []), delta.citation];
      else if (delta.type === "input_json_delta")
        json.set(event.index, (json.get(event.index) ?? "") + delta.partial_json);
    } else if (event.type === "message_delta" && this.message !== undefined) {
      this.message.stop_reason = event.delta.stop_reason;
      this.message.stop_sequence = event.delta.stop_sequence;
      this.message.usage = { ...event.usage };
    }
  }

  result(): AnthropicMessage {
    for (const [index, text] of this.json) {
      const block = this.content[index];
      if (block?.type === "tool_use" || block?.type === "server_tool_use") block.input = JSON.parse(text) as object;
    }
    if (this.message === undefined) throw new ProxyError("internal", "No message was produced.");
    return { ...this.message, content: this.content };
  }
}

/** A fresh translation of one Messages answer. */
export function messagesTranslation(
  options: AnthropicEventOptions,
): Translation<MessagesFrame, AnthropicMessage> & { result(): AnthropicMessage } {
  return new MessagesTranslation(options);
}
