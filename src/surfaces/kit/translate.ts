/**
 * The one translation contract of every door (engine events → the client's wire) and its drivers.
 *
 * A door describes its translation once ({@link Translation}): its state, and handlers for the start, each engine
 * event kind, the finish and a failure. Three drivers run it: {@link streamTurn} (an SSE body), {@link driveTurn}
 * (ACP notifications, awaited one by one) and {@link foldTurn} (the non-streaming JSON body). The drivers own the
 * rules every door shares, once:
 * - releasing the upstream turn when the reader leaves (the source's `return()`, even before the first event) or a
 *   handler throws;
 * - "the turn never ended": the events stopped without a `turn-end`, also while a tool call was still open;
 * - first-token timing and counts for the log and metrics (the `watch` hook, see request-io.ts);
 * - an estimated usage without an input figure reports the request's input estimate (input-estimate.ts), seen so by
 *   the door and the `watch` hook (the log, and the gateway's bill) alike;
 * - a failure after the first frame goes through the door's `fail` handler, which renders the kit's error decision
 *   (error-policy.ts) in the door's shape;
 * - server tools only where the client offered them: a web search or fetch the request offered no tool for (the
 *   bridge refused it) reaches no door's handlers, only the log;
 * - tool arguments streamed as Cursor forms them: a `tool-call-delta` carries the whole argument text so far
 *   (cursor-protocol-addendum-3 T1); the door's handler gets only the suffix each snapshot adds. When a snapshot
 *   does not extend what was sent, that call streams no more, and its completion carries what is left (`rest`).
 */
import type { BackendEvent } from "../../backend/types.js";
import { ProxyError, upstreamTruncated } from "../../util/errors.js";
import type { PullBodyOptions, PulledFrame, PullSource } from "../../util/pull-body.js";
import { pullBody } from "../../util/pull-body.js";
import type { ErrorContext } from "./error-policy.js";
import { withInputEstimate } from "./input-estimate.js";

/** Queues one frame of the door's wire. */
export type Emit<F> = (frame: F) => void;

/** A piece of a tool call's arguments, as the door sees it. */
export interface ToolArgumentsDelta {
  type: "tool-call-delta";
  toolCallId: string;
  toolName: string;
  /** The first piece of this call: the door opens the call's block/item now. */
  first: boolean;
  /** What this snapshot adds to the text already handed out ("" only on the first piece). */
  delta: string;
}

/** A completed tool call, as the door sees it. */
export type ToolCallDone = Extract<BackendEvent, { type: "tool-call" }> & {
  /** Pieces of this call were handed out before (the door opened it at its first piece). */
  streamed: boolean;
  /**
   * The final arguments past what was handed out (all of them when nothing was); undefined when the pieces are no
   * prefix of the final arguments ({@link restOf} turns that into an error where the wire cannot replace them).
   */
  rest: string | undefined;
};

/** The events a door's handlers receive. */
export type DoorEvent =
  | Exclude<BackendEvent, { type: "tool-call" | "tool-call-delta" }>
  | ToolArgumentsDelta
  | ToolCallDone;

/** One handler per event kind (kinds a door does not show need none). */
export type EventHandlers<F> = {
  [K in DoorEvent["type"]]?: (event: Extract<DoorEvent, { type: K }>, emit: Emit<F>) => void;
};

/** How a door translates one turn: state in the object, frames through `emit`. */
export interface Translation<F, R = unknown> {
  /** Frames before the first event (a `message_start`, a role delta…). */
  start?(emit: Emit<F>): void;
  on: EventHandlers<F>;
  /** The events ended after the `turn-end`: the closing frames (may wait, e.g. to store the response first). */
  finish(emit: Emit<F>): void | Promise<void>;
  /** The frames that report a failure after the stream started (rendered from the kit's error decision). */
  fail(error: unknown, context: ErrorContext, emit: Emit<F>): void;
  /** The non-streaming body ({@link foldTurn}), read after `finish`. */
  result?(): R;
  /** Sees every frame while folding (a door that builds its body from its frames). */
  collect?(frame: F): void;
}

/** The one "turn never ended" error, the backend's too: `upstream_truncated` (util/errors.ts). */
export function turnNeverEnded(openToolCall = false): ProxyError {
  return upstreamTruncated(openToolCall);
}

/** The rest of a streamed call's arguments; a call whose pieces are no prefix of its final arguments is an error. */
export function restOf(call: ToolCallDone): string {
  if (call.rest !== undefined) return call.rest;
  throw new ProxyError(
    "backend_protocol",
    `The arguments of the model's call to tool '${call.toolName}' changed after they were streamed.`,
  );
}

/** JSON texts equal as values (whitespace and key order aside). */
function sameJson(a: string, b: string): boolean {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (typeof value !== "object" || value === null) return value;
    const entries = Object.entries(value).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return Object.fromEntries(entries.map(([key, item]) => [key, canonical(item)]));
  };
  try {
    return JSON.stringify(canonical(JSON.parse(a))) === JSON.stringify(canonical(JSON.parse(b)));
  } catch {
    return false;
  }
}

/** What the driver knows of a call whose arguments are streaming. */
interface StreamingCall {
  /** Text handed out to the door. */
  sent: string;
  /** The latest snapshot. */
  last: string;
  /** A snapshot did not extend `sent`: nothing more streams for this call. */
  stopped: boolean;
}

type AnyHandler<F> = (event: DoorEvent, emit: Emit<F>) => void;

/**
 * Reads the engine's events through a translation, one frame at a time. A plain iterator, not an async generator: it
 * sits on the per-event hot path, and frames already produced are handed out without touching the source.
 */
class TurnReader<F> {
  private readonly queue: F[] = [];
  private readonly source: AsyncIterator<BackendEvent>;
  private sourceDone = false;
  /** The `turn-end` arrived: only usage and checkpoints still reach the door. */
  private ended = false;
  /** Nothing more is handed out once the queue is empty. */
  private over = false;
  private readonly calls = new Map<string, StreamingCall>();
  readonly emit: Emit<F> = (frame) => {
    this.queue.push(frame);
  };

  constructor(
    events: AsyncIterable<BackendEvent>,
    private readonly translation: Translation<F>,
    private readonly watch: ((event: BackendEvent) => void) | undefined,
    private readonly inputTokens: (() => number) | undefined,
  ) {
    this.source = events[Symbol.asyncIterator]();
    translation.start?.(this.emit);
  }

  /** The next frame, undefined once the turn is over. Throws the turn's failure (the source is released first). */
  next(): Promise<F | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift());
    if (this.over) return Promise.resolve(undefined);
    return this.read();
  }

  /** Releases the source if it is still open (the reader left, or a handler failed). Idempotent. */
  async release(): Promise<void> {
    this.over = true;
    this.queue.length = 0;
    if (this.sourceDone) return;
    this.sourceDone = true;
    await this.source.return?.();
  }

  private read(): Promise<F | undefined> {
    return this.source.next().then(this.onResult, this.onSourceError);
  }

  private readonly onResult = (result: IteratorResult<BackendEvent>): F | undefined | Promise<F | undefined> => {
    try {
      if (result.done === true) {
        this.sourceDone = true;
        return this.end();
      }
      this.handle(result.value);
    } catch (error) {
      return this.failed(error);
    }
    return this.queue.length > 0 ? this.queue.shift() : this.read();
  };

  /** The source's own error: it is finished, nothing to release. */
  private readonly onSourceError = (error: unknown): never => {
    this.sourceDone = true;
    this.over = true;
    throw error;
  };

  private async failed(error: unknown): Promise<never> {
    await this.release();
    throw error;
  }

  private async end(): Promise<F | undefined> {
    this.over = true;
    if (!this.ended) throw turnNeverEnded(this.calls.size > 0);
    await this.translation.finish(this.emit);
    return this.queue.shift();
  }

  private handle(received: BackendEvent): void {
    const event = received.type === "usage" ? this.usage(received) : received;
    this.watch?.(event);
    if (this.ended && event.type !== "usage" && event.type !== "checkpoint") return;
    // A web tool the request did not offer was refused between the bridge and Cursor: no door shows it.
    if ((event.type === "web-search" || event.type === "web-fetch") && event.offered === false) return;
    const on = this.translation.on as Record<string, AnyHandler<F> | undefined>;
    if (event.type === "tool-call-delta") this.onArguments(event, on["tool-call-delta"]);
    else if (event.type === "tool-call") this.onToolCall(event, on["tool-call"]);
    else on[event.type]?.(event, this.emit);
    if (event.type === "turn-end") this.ended = true;
  }

  /** A usage event as the door and the log see it: with the request's input estimate when it has no input figure. */
  private usage(event: Extract<BackendEvent, { type: "usage" }>): BackendEvent {
    if (this.inputTokens === undefined) return event;
    const usage = withInputEstimate(event.usage, this.inputTokens);
    return usage === event.usage ? event : { type: "usage", usage };
  }

  private onArguments(event: Extract<BackendEvent, { type: "tool-call-delta" }>, handler?: AnyHandler<F>): void {
    const { toolCallId, toolName, argumentsText } = event;
    let call = this.calls.get(toolCallId);
    const first = call === undefined;
    if (call === undefined) {
      call = { sent: "", last: "", stopped: false };
      this.calls.set(toolCallId, call);
    }
    call.last = argumentsText;
    if (call.stopped) return;
    if (!argumentsText.startsWith(call.sent)) {
      call.stopped = true;
      return;
    }
    const delta = argumentsText.slice(call.sent.length);
    if (!first && delta === "") return;
    call.sent = argumentsText;
    handler?.({ type: "tool-call-delta", toolCallId, toolName, first, delta }, this.emit);
  }

  private onToolCall(event: Extract<BackendEvent, { type: "tool-call" }>, handler?: AnyHandler<F>): void {
    const call = this.calls.get(event.toolCallId);
    this.calls.delete(event.toolCallId);
    // An empty arguments string is not parseable JSON; clients expect an object.
    let args = event.arguments === "" ? "{}" : event.arguments;
    if (call === undefined) {
      handler?.({ ...event, arguments: args, streamed: false, rest: args }, this.emit);
      return;
    }
    // Cursor's structured arguments win; the streamed text stands for them when it is the same value.
    if (!args.startsWith(call.sent) && call.last.startsWith(call.sent) && sameJson(call.last, args)) args = call.last;
    const rest = args.startsWith(call.sent) ? args.slice(call.sent.length) : undefined;
    handler?.({ ...event, arguments: args, streamed: true, rest }, this.emit);
  }
}

/** Options of the drivers. */
export interface DriveOptions {
  /** Sees every engine event first (the access log's first token and counts). */
  watch?: ((event: BackendEvent) => void) | undefined;
  /**
   * The request's input tokens by estimate (the engine's `requestInputEstimate`, input-estimate.ts): what an
   * estimated usage without an input figure reports. @default none (such a usage keeps its 0)
   */
  inputTokens?: (() => number) | undefined;
}

/** Runs a translation to its end and returns its non-streaming body. A failure is thrown (the source released). */
export async function foldTurn<F, R>(
  events: AsyncIterable<BackendEvent>,
  translation: Translation<F, R> & { result(): R },
  options: DriveOptions = {},
): Promise<R> {
  const reader = new TurnReader(events, translation, options.watch, options.inputTokens);
  try {
    for (let frame = await reader.next(); frame !== undefined; frame = await reader.next()) {
      translation.collect?.(frame);
    }
  } finally {
    await reader.release();
  }
  return translation.result();
}

/**
 * Runs a translation, handing each frame to `sink` and waiting for it (ACP notifications). A failure is thrown (the
 * source released); so is a sink's.
 */
export async function driveTurn<F>(
  events: AsyncIterable<BackendEvent>,
  translation: Translation<F>,
  sink: (frame: F) => Promise<void>,
  options: DriveOptions = {},
): Promise<void> {
  const reader = new TurnReader(events, translation, options.watch, options.inputTokens);
  try {
    for (let frame = await reader.next(); frame !== undefined; frame = await reader.next()) await sink(frame);
  } finally {
    await reader.release();
  }
}

/** How a door's frames become bytes. */
export interface StreamWire<F> {
  encode(frame: F): string;
  /** Written after the last frame of a turn that finished ("" for nothing). */
  end: string;
  /** Written whenever the turn is silent for `intervalMs` (0: never). */
  ping?: { frame: string; intervalMs: number } | undefined;
}

/** Options of {@link streamTurn}. */
export interface StreamOptions extends DriveOptions {
  /** The body's callbacks (the kit's bookkeeping lives there). */
  callbacks?: PullBodyOptions | undefined;
  /** Context of the error decision (the request id an internal error names). */
  errorContext?: ErrorContext | undefined;
}

const PING = Symbol("ping");

/**
 * Runs a translation as a pull-driven response body (util/pull-body.ts: backpressure reaches the source): one frame
 * per read, then `wire.end`; a failure becomes the door's `fail` frames, then the end. Cancelling the body calls
 * `onCancel`, then releases the source, so the upstream turn is released.
 */
export function streamTurn<F>(
  events: AsyncIterable<BackendEvent>,
  translation: Translation<F>,
  wire: StreamWire<F>,
  options: StreamOptions = {},
): ReadableStream<Uint8Array> {
  return pullBody(turnSource(events, translation, wire, options), options.callbacks);
}

/**
 * The source of {@link streamTurn}'s body, for a body made before the turn started (util/pull-body.ts,
 * `pendingStreamedResponse`); `options.callbacks` are the body's, not the source's.
 */
export function turnSource<F>(
  events: AsyncIterable<BackendEvent>,
  translation: Translation<F>,
  wire: StreamWire<F>,
  options: Omit<StreamOptions, "callbacks"> = {},
): PullSource {
  const reader = new TurnReader(events, translation, options.watch, options.inputTokens);
  const toFrame = (frame: F | undefined): PulledFrame =>
    frame === undefined ? { frame: wire.end, last: true } : { frame: wire.encode(frame), last: false };
  const interval = wire.ping?.intervalMs ?? 0;
  let pending: Promise<F | undefined> | undefined;
  const readOrPing = async (): Promise<PulledFrame> => {
    pending ??= reader.next();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ping = new Promise<typeof PING>((resolve) => {
      timer = setTimeout(() => resolve(PING), interval);
    });
    try {
      const result = await Promise.race([pending, ping]);
      if (result === PING) return { frame: wire.ping?.frame ?? "", last: false };
      pending = undefined;
      return toFrame(result);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    // Not `async` without pings: one promise per frame (the reader's), none of an async function's own.
    read: interval > 0 ? readOrPing : () => reader.next().then(toFrame),
    errorFrame: (error) => {
      pending = undefined;
      const frames: F[] = [];
      translation.fail(error, options.errorContext ?? {}, (frame) => frames.push(frame));
      return frames.map((frame) => wire.encode(frame)).join("");
    },
    release: () => reader.release(),
  };
}
