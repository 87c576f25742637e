/**
 * BackendEvent stream → Responses streaming events (or one response object). Each run of reasoning, text or a tool
 * call becomes one output item, announced with `output_item.added`, filled with deltas and closed with
 * `output_item.done`; a new kind of output closes the open item first. Every event carries a `sequence_number`.
 * A backend failure after the stream started becomes an `error` event followed by `response.failed`.
 */
import type { BackendEvent, TurnEndReason, Usage, WebReference } from "../../backend/types.js";
import { namedEventFrame } from "../../util/pull-body.js";
import type { ErrorContext } from "../kit/error-policy.js";
import { toOpenAIError } from "../kit/openai-error.js";
import {
  type Emit,
  type EventHandlers,
  restOf,
  type StreamWire,
  type ToolArgumentsDelta,
  type ToolCallDone,
  type Translation,
} from "../kit/translate.js";
import { encodeReasoningToken } from "./reasoning-token.js";
import { customInput, type ToolMap } from "./tools.js";
import { urlCitations, webSearchCallItem } from "./web-items.js";
import type { OutputItem, ResponseObject, ResponseStreamEvent, ResponseUsage, SummaryTextPart } from "./wire.js";

/** Prefixes of generated item ids. */
export type ItemIdPrefix = "msg" | "rs" | "fc" | "ctc" | "ws";

/** Options of the translation; ids are injected so output is deterministic in tests. */
export interface ResponseEventsOptions {
  /** The response as created (status `in_progress`, empty output, no usage), echoing the request's fields. */
  base: ResponseObject;
  toolMap: ToolMap;
  newItemId: (prefix: ItemIdPrefix) => string;
  /** Stream reasoning as summary text (`reasoning.summary` was set). */
  reasoningSummary: boolean;
  /** List the results on `web_search_call` items (`include: ["web_search_call.action.sources"]`). */
  includeWebSources?: boolean;
  /** Attach the bridge's `encrypted_content` to reasoning items (`include: ["reasoning.encrypted_content"]`). */
  includeEncryptedReasoning: boolean;
  /**
   * Called once with the final response when the turn completed or was cut (not when it failed); the terminal
   * event waits for it, so a client that continues with `previous_response_id` right away finds it stored.
   */
  onFinish?: (response: ResponseObject) => void | Promise<void>;
}

/** An event before its sequence number is assigned (distributes over the union). */
type Emitted = ResponseStreamEvent extends infer E ? (E extends unknown ? Omit<E, "sequence_number"> : never) : never;

/** Converts backend usage to the Responses naming. */
export function toResponseUsage(usage: Usage | undefined): ResponseUsage {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    input_tokens_details: { cached_tokens: usage?.cacheReadTokens ?? 0 },
    output_tokens: usage?.outputTokens ?? 0,
    output_tokens_details: { reasoning_tokens: usage?.reasoningTokens ?? 0 },
    total_tokens: usage?.totalTokens ?? 0,
  };
}

/** The Responses stream's bytes: `event: <type>` frames; the stream simply ends after the terminal event. */
export const RESPONSES_WIRE: StreamWire<ResponseStreamEvent> = { encode: namedEventFrame, end: "" };

/** A call item's streamed text as its arguments (a custom tool's: its input), and its status. */
function settleCall(item: OutputItem, text: string, status: "completed" | "incomplete"): void {
  if (item.type === "function_call") item.arguments = text;
  else if (item.type === "custom_tool_call") item.input = text;
  else return;
  item.status = status;
}

/** The state of one response being built, on the kit's translation contract (kit/translate.ts). */
class ResponseBuilder implements Translation<ResponseStreamEvent, ResponseObject> {
  readonly response: ResponseObject;
  private open: { item: OutputItem; index: number; text: string } | undefined;
  /** Function calls whose arguments are streaming, by call id (calls may interleave). */
  private readonly streaming = new Map<string, { item: OutputItem; index: number; text: string }>();
  private reason: TurnEndReason | undefined;
  private usage: Usage | undefined;
  private sequence = 0;
  /** Results of the turn's searches: a message naming one of their URLs cites it. */
  private readonly references: WebReference[] = [];

  constructor(private readonly options: ResponseEventsOptions) {
    this.response = structuredClone(options.base);
  }

  /** Numbers the events (`type` and `sequence_number` lead each serialized event) and emits them. */
  private send(emit: Emit<ResponseStreamEvent>, events: Emitted[]): void {
    for (const event of events) {
      const { type, ...rest } = event;
      emit({ type, sequence_number: this.sequence++, ...rest } as ResponseStreamEvent);
    }
  }

  start(emit: Emit<ResponseStreamEvent>): void {
    this.send(emit, [
      { type: "response.created", response: structuredClone(this.response) },
      { type: "response.in_progress", response: structuredClone(this.response) },
    ]);
  }

  readonly on: EventHandlers<ResponseStreamEvent> = {
    "reasoning-delta": (event, emit) => this.send(emit, this.reasoningDelta(event.text)),
    "reasoning-end": (_event, emit) => this.send(emit, this.open?.item.type === "reasoning" ? this.close() : []),
    "text-delta": (event, emit) => this.send(emit, this.textDelta(event.text)),
    "tool-call-delta": (event, emit) => this.send(emit, this.toolArguments(event)),
    "tool-call": (event, emit) => this.send(emit, this.toolCall(event)),
    usage: (event) => {
      this.usage = event.usage;
    },
    "web-search": (event, emit) => this.send(emit, this.webCall(event)),
    "web-fetch": (event, emit) => this.send(emit, this.webCall(event)),
    "turn-end": (event, emit) => {
      this.reason = event.reason;
      this.send(emit, this.close());
    },
  };

  /** Completes the response; `onFinish` (storing it) runs before the terminal event. */
  async finish(emit: Emit<ResponseStreamEvent>): Promise<void> {
    const incomplete = this.reason === "length";
    this.response.status = incomplete ? "incomplete" : "completed";
    this.response.incomplete_details = incomplete ? { reason: "max_output_tokens" } : null;
    this.response.usage = toResponseUsage(this.usage);
    await this.options.onFinish?.(structuredClone(this.response));
    this.send(emit, [{ type: incomplete ? "response.incomplete" : "response.completed", response: this.response }]);
  }

  /** The error event and `response.failed` for a failure after the stream started. */
  fail(error: unknown, context: ErrorContext, emit: Emit<ResponseStreamEvent>): void {
    const { code, message, param } = toOpenAIError(error, context).body.error;
    this.settleUnfinished();
    this.response.status = "failed";
    this.response.error = { code: code ?? "server_error", message };
    this.response.usage = this.usage === undefined ? null : toResponseUsage(this.usage);
    this.send(emit, [
      { type: "error", code, message, param },
      { type: "response.failed", response: this.response },
    ]);
  }

  result(): ResponseObject {
    return this.response;
  }

  private add(item: OutputItem): Emitted[] {
    const index = this.response.output.length;
    this.response.output.push(item);
    this.open = { item, index, text: "" };
    return [{ type: "response.output_item.added", output_index: index, item: structuredClone(item) }];
  }

  private reasoningDelta(text: string): Emitted[] {
    const out = this.open?.item.type === "reasoning" ? [] : [...this.close(), ...this.add(this.reasoningItem())];
    const open = this.open;
    if (open === undefined) return out;
    open.text += text;
    if (!this.options.reasoningSummary) return out;
    const at = { item_id: open.item.id, output_index: open.index, summary_index: 0 };
    if (open.text === text) {
      out.push({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } });
    }
    out.push({ type: "response.reasoning_summary_text.delta", ...at, delta: text });
    return out;
  }

  private reasoningItem(): OutputItem {
    return { type: "reasoning", id: this.options.newItemId("rs"), summary: [] };
  }

  private textDelta(text: string): Emitted[] {
    const out: Emitted[] = [];
    let open = this.open;
    if (open?.item.type !== "message") {
      const id = this.options.newItemId("msg");
      out.push(
        ...this.close(),
        ...this.add({ type: "message", id, status: "in_progress", role: "assistant", content: [] }),
      );
      open = this.open;
      if (open === undefined) return out;
      const part = { type: "output_text" as const, text: "", annotations: [], logprobs: [] };
      out.push({ type: "response.content_part.added", item_id: id, output_index: open.index, content_index: 0, part });
    }
    open.text += text;
    const at = { item_id: open.item.id, output_index: open.index, content_index: 0 };
    out.push({ type: "response.output_text.delta", ...at, delta: text, logprobs: [] });
    return out;
  }

  private target(cursorName: string) {
    return this.options.toolMap.get(cursorName) ?? { kind: "function" as const, name: cursorName };
  }

  /** A function call's `function_call` item, announced empty. */
  private functionCallItem(callId: string, cursorName: string): OutputItem {
    const target = this.target(cursorName);
    return {
      type: "function_call",
      id: this.options.newItemId("fc"),
      status: "in_progress",
      call_id: callId,
      name: target.name,
      ...(target.kind === "function" && target.namespace !== undefined ? { namespace: target.namespace } : {}),
      arguments: "",
    };
  }

  /** A function call's arguments as they form (a custom tool's input is whole only at the end). */
  private toolArguments(event: ToolArgumentsDelta): Emitted[] {
    if (this.target(event.toolName).kind === "custom") return [];
    const out: Emitted[] = [];
    let call = this.streaming.get(event.toolCallId);
    if (call === undefined) {
      if (!event.first) return [];
      out.push(...this.close());
      const item = this.functionCallItem(event.toolCallId, event.toolName);
      out.push(...this.add(item));
      call = { item, index: this.response.output.length - 1, text: "" };
      this.open = undefined;
      this.streaming.set(event.toolCallId, call);
    }
    out.push(...this.argumentsDelta(call, event.delta));
    return out;
  }

  private argumentsDelta(call: { item: OutputItem; index: number; text: string }, delta: string): Emitted[] {
    if (delta === "") return [];
    call.text += delta;
    const at = { item_id: call.item.id, output_index: call.index };
    return [{ type: "response.function_call_arguments.delta", ...at, delta }];
  }

  private toolCall(event: ToolCallDone): Emitted[] {
    const { toolCallId: callId, toolName: cursorName } = event;
    const streamed = this.streaming.get(callId);
    if (streamed !== undefined) {
      this.streaming.delete(callId);
      const out = this.argumentsDelta(streamed, restOf(event));
      const { item, index, text } = streamed;
      const at = { item_id: item.id, output_index: index };
      const name = item.type === "function_call" ? item.name : cursorName;
      out.push({ type: "response.function_call_arguments.done", ...at, name, arguments: text });
      if (item.type === "function_call") {
        item.arguments = text;
        item.status = "completed";
      }
      out.push({ type: "response.output_item.done", output_index: index, item: structuredClone(item) });
      return out;
    }
    const args = event.arguments;
    const out = this.close();
    const target = this.target(cursorName);
    if (target.kind === "custom") {
      const input = customInput(args);
      const id = this.options.newItemId("ctc");
      out.push(
        ...this.add({
          type: "custom_tool_call",
          id,
          status: "in_progress",
          call_id: callId,
          name: target.name,
          input: "",
        }),
      );
      const at = { item_id: id, output_index: this.response.output.length - 1 };
      out.push({ type: "response.custom_tool_call_input.delta", ...at, delta: input });
      out.push({ type: "response.custom_tool_call_input.done", ...at, input });
      if (this.open !== undefined) this.open.text = input;
      return [...out, ...this.close()];
    }
    const item = this.functionCallItem(callId, cursorName);
    out.push(...this.add(item));
    const at = { item_id: item.id, output_index: this.response.output.length - 1 };
    out.push({ type: "response.function_call_arguments.delta", ...at, delta: args });
    out.push({ type: "response.function_call_arguments.done", ...at, name: target.name, arguments: args });
    if (this.open !== undefined) this.open.text = args;
    return [...out, ...this.close()];
  }

  /** A `web_search_call` item for a search (action `search`) or a fetch (action `open_page`), already finished. */
  private webCall(event: Extract<BackendEvent, { type: "web-search" | "web-fetch" }>): Emitted[] {
    const out = this.close();
    const ok = event.status === "completed";
    if (event.type === "web-search" && ok) this.references.push(...event.references);
    const item = webSearchCallItem(event, this.options.newItemId("ws"), this.options.includeWebSources === true);
    out.push(...this.add(item));
    this.open = undefined;
    const at = { item_id: item.id, output_index: this.response.output.length - 1 };
    out.push({ type: "response.web_search_call.in_progress", ...at });
    out.push({ type: "response.web_search_call.searching", ...at });
    if (ok) out.push({ type: "response.web_search_call.completed", ...at });
    item.status = ok ? "completed" : "failed";
    out.push({ type: "response.output_item.done", output_index: at.output_index, item: structuredClone(item) });
    return out;
  }

  /** Closes the open item (if any) with its `.done` events. */
  /**
   * Before `response.failed`: the items still open keep what was streamed into them, marked `incomplete`, so a client
   * that rebuilds the answer from the final response object has the text its deltas carried (no events: the stream
   * ends with the error).
   */
  private settleUnfinished(): void {
    const unfinished = [...(this.open === undefined ? [] : [this.open]), ...this.streaming.values()];
    this.open = undefined;
    this.streaming.clear();
    for (const { item, text } of unfinished) {
      switch (item.type) {
        case "reasoning":
          if (this.options.reasoningSummary && text !== "") item.summary = [{ type: "summary_text", text }];
          break;
        case "message":
          item.content = [{ type: "output_text", text, annotations: [], logprobs: [] }];
          item.status = "incomplete";
          break;
        case "function_call":
        case "custom_tool_call":
          settleCall(item, text, "incomplete");
          break;
      }
    }
  }

  private close(): Emitted[] {
    const open = this.open;
    if (open === undefined) return [];
    this.open = undefined;
    const { item, index, text } = open;
    const out: Emitted[] = [];
    const at = { item_id: item.id, output_index: index };
    switch (item.type) {
      case "reasoning": {
        if (this.options.reasoningSummary && text !== "") {
          const part: SummaryTextPart = { type: "summary_text", text };
          out.push({ type: "response.reasoning_summary_text.done", ...at, summary_index: 0, text });
          out.push({ type: "response.reasoning_summary_part.done", ...at, summary_index: 0, part });
          item.summary = [part];
        }
        if (this.options.includeEncryptedReasoning) item.encrypted_content = encodeReasoningToken(text);
        break;
      }
      case "message": {
        const annotations = urlCitations(text, this.references);
        annotations.forEach((annotation, annotationIndex) => {
          out.push({
            type: "response.output_text.annotation.added",
            ...at,
            content_index: 0,
            annotation_index: annotationIndex,
            annotation,
          });
        });
        const part = { type: "output_text" as const, text, annotations, logprobs: [] };
        out.push({ type: "response.output_text.done", ...at, content_index: 0, text, logprobs: [] });
        out.push({ type: "response.content_part.done", ...at, content_index: 0, part });
        item.content = [part];
        item.status = "completed";
        break;
      }
      case "function_call":
      case "custom_tool_call":
        settleCall(item, text, "completed");
        break;
    }
    out.push({ type: "response.output_item.done", output_index: index, item: structuredClone(item) });
    return out;
  }
}

/**
 * A fresh translation of one response: `response.created`, `response.in_progress`, the items, then
 * `response.completed` / `response.incomplete`, or `error` + `response.failed` if the backend fails midway.
 */
export function responseTranslation(
  options: ResponseEventsOptions,
): Translation<ResponseStreamEvent, ResponseObject> & { result(): ResponseObject } {
  return new ResponseBuilder(options);
}
