/**
 * Where the bridge cuts an answer itself, since Cursor's agent API has neither stop sequences nor an output cap. Both
 * cuts end the turn the same way: the answer ends (`turn-end` `stop` or `length`), the source is returned, which
 * releases the upstream turn as when a client stops reading, and the conversation goes on from the cut answer.
 *
 * Stop sequences (chat `stop`, Messages `stop_sequences`): the answer's text passes through with the last few
 * characters held back (one fewer than the longest sequence), so a sequence split across deltas is still found; at
 * the first one found, the text before it goes out and the turn ends there (`stop`). Only the answer's text is
 * searched (not reasoning, not tool arguments), as OpenAI and Anthropic do.
 *
 * The output cap (chat `max_completion_tokens` / `max_tokens`, Responses `max_output_tokens`, Messages `max_tokens`),
 * by estimate: see {@link capOutput}.
 *
 * Each cut is a synchronous filter run by {@link filtered}, an iterator that hands the reader's `return()` straight to
 * the source: an async generator would queue it behind the read it is waiting on, and a client that goes away would
 * not release the turn until Cursor's next event.
 */
import type { BackendEvent } from "../../backend/types.js";
import { CHARS_PER_TOKEN } from "../../util/token-estimate.js";

/**
 * The most stop sequences a request may list, and the longest one (characters): every text delta is searched for
 * each, so a list without bound (a 1 MB body of short sequences) would cost seconds of the event loop per answer, and
 * one very long sequence would hold the whole answer back. OpenAI's chat takes 4; these leave room for any client.
 */
export const STOP_SEQUENCE_LIMITS = { count: 128, chars: 1000 };

/** A cut, one event at a time: what goes out for each event, and at the source's end. */
interface EventFilter {
  /** The events that go out for `event`. */
  push(event: BackendEvent): BackendEvent[];
  /** What is still held when the source ends. */
  flush(): BackendEvent[];
  /** True once the filter ended the answer: the source is released and read no more. */
  readonly cut: boolean;
}

/** `source` through `filter`; the reader's `return()` reaches the source at once, even while a read is pending. */
function filtered(source: AsyncIterable<BackendEvent>, filter: EventFilter): AsyncIterable<BackendEvent> {
  return {
    [Symbol.asyncIterator]: () => {
      const events = source[Symbol.asyncIterator]();
      const queue: BackendEvent[] = [];
      let over = false;
      const release = async () => {
        over = true;
        await events.return?.();
      };
      return {
        async next(): Promise<IteratorResult<BackendEvent>> {
          while (queue.length === 0 && !over) {
            const result = await events.next();
            if (over) break;
            if (result.done === true) {
              over = true;
              queue.push(...filter.flush());
            } else {
              queue.push(...filter.push(result.value));
              // The answer's end goes out at once; the upstream turn is released meanwhile (its close may wait on
              // Cursor for a while: the client's last frame does not).
              if (filter.cut) release().catch(() => {});
            }
          }
          const event = queue.shift();
          return event === undefined ? { done: true, value: undefined } : { done: false, value: event };
        },
        async return(): Promise<IteratorResult<BackendEvent>> {
          queue.length = 0;
          if (!over) await release();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** The earliest sequence in `text` (the longest of those starting there), or undefined. */
function firstStop(text: string, sequences: readonly string[]): { index: number; sequence: string } | undefined {
  let found: { index: number; sequence: string } | undefined;
  for (const sequence of sequences) {
    const index = text.indexOf(sequence);
    if (index < 0) continue;
    if (
      found === undefined ||
      index < found.index ||
      (index === found.index && sequence.length > found.sequence.length)
    ) {
      found = { index, sequence };
    }
  }
  return found;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Where to split `text` so that the last `keep` characters stay held, never inside a surrogate pair. */
function splitPoint(text: string, keep: number): number {
  let cut = Math.max(0, text.length - keep);
  if (cut > 0 && isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
  return cut;
}

/** Cuts the answer's text at the first of `sequences` (none empty). */
class StopFilter implements EventFilter {
  cut = false;
  private held = "";
  private readonly keep: number;

  constructor(
    private readonly sequences: readonly string[],
    private readonly onStop: (sequence: string) => void,
  ) {
    // A loop, not Math.max(...lengths): a body may list more sequences than a call's arguments can hold.
    let keep = 0;
    for (const sequence of sequences) if (sequence.length - 1 > keep) keep = sequence.length - 1;
    this.keep = keep;
  }

  push(event: BackendEvent): BackendEvent[] {
    if (event.type !== "text-delta") return [...this.flush(), event];
    const text = this.held + event.text;
    this.held = "";
    const stop = firstStop(text, this.sequences);
    if (stop !== undefined) {
      this.cut = true;
      this.onStop(stop.sequence);
      const end: BackendEvent = { type: "turn-end", reason: "stop" };
      return stop.index > 0 ? [{ type: "text-delta", text: text.slice(0, stop.index) }, end] : [end];
    }
    const cut = splitPoint(text, this.keep);
    this.held = text.slice(cut);
    return cut > 0 ? [{ type: "text-delta", text: text.slice(0, cut) }] : [];
  }

  flush(): BackendEvent[] {
    const held = this.held;
    this.held = "";
    return held === "" ? [] : [{ type: "text-delta", text: held }];
  }
}

/**
 * The turn's events with the answer cut at the first stop sequence; `onStop` is told which one ended it. Without
 * sequences the events pass unchanged.
 */
export function cutAtStopSequences(
  events: AsyncIterable<BackendEvent>,
  stops: readonly string[],
  onStop: (sequence: string) => void,
): AsyncIterable<BackendEvent> {
  const sequences = stops.filter((stop) => stop !== "");
  return sequences.length === 0 ? events : filtered(events, new StopFilter(sequences, onStop));
}

/** How many of `text`'s first characters fit in `room`, never ending inside a surrogate pair. */
function fitting(text: string, room: number): number {
  let cut = Math.min(room, text.length);
  if (cut > 0 && cut < text.length && isHighSurrogate(text.charCodeAt(cut - 1))) cut--;
  return cut;
}

/** Ends the answer where its output passes `maxChars` (see {@link capOutput}). */
class CapFilter implements EventFilter {
  cut = false;
  private used = 0;
  /** The calls that started within the cap: they stream as they form and go out whole, whatever their size. */
  private readonly started = new Set<string>();

  constructor(
    private readonly maxChars: number,
    private readonly countsReasoning: boolean,
    private readonly onCap: () => void,
  ) {}

  push(event: BackendEvent): BackendEvent[] {
    // Reasoning the client did not ask for is not part of the answer it capped (see capOutput).
    if (event.type === "reasoning-delta" && !this.countsReasoning) return [event];
    if (event.type === "tool-call-delta") {
      if (this.started.has(event.toolCallId)) return [event];
      if (this.used >= this.maxChars && this.started.size === 0) return this.end();
      this.started.add(event.toolCallId);
      return [event];
    }
    if (event.type === "tool-call") {
      // Started within the cap (streamed, or whole now): it goes out whole, and counts.
      if (!this.started.delete(event.toolCallId) && this.used >= this.maxChars && this.started.size === 0) {
        return this.end();
      }
      this.used += event.arguments.length;
      return [event];
    }
    const size = event.type === "text-delta" || event.type === "reasoning-delta" ? event.text.length : 0;
    // While a call that started within the cap is still forming, nothing ends the answer: the call would be cut off.
    if (this.used + size <= this.maxChars || this.started.size > 0) {
      this.used += size;
      return [event];
    }
    const end = this.end();
    if (event.type !== "text-delta" && event.type !== "reasoning-delta") return end;
    const room = fitting(event.text, this.maxChars - this.used);
    return room > 0 ? [{ type: event.type, text: event.text.slice(0, room) }, ...end] : end;
  }

  flush(): BackendEvent[] {
    return [];
  }

  private end(): BackendEvent[] {
    this.cut = true;
    this.onCap();
    return [{ type: "turn-end", reason: "length" }];
  }
}

/**
 * The turn's events with the output capped at `maxTokens`, by estimate: the answer's text and tool-call arguments
 * count at {@link CHARS_PER_TOKEN} characters a token (the rate the gateway reserves and bills by), and its reasoning
 * too when `countsReasoning` (the client asked for reasoning: OpenAI's and Anthropic's caps then include it). Reasoning
 * the client did not ask for is not counted: a thinking model asked for a 20-token title would otherwise think its
 * whole cap away and answer nothing, while the client (an older one sending `max_tokens`, a title request) capped the
 * text it reads. Such reasoning still goes through (the door shows or drops it) and is billed as usage. The delta that
 * would pass the cap is cut where the cap falls (never inside a surrogate pair) and the turn ends with `length`;
 * `onCap` is told. A tool call goes out whole or not at all, so no client receives a call it cannot parse: one that
 * starts within the cap streams its arguments as they form and goes out whole even where they pass the cap (the
 * answer then ends at its next output), and one that would start past it ends the answer before it. The cap is thus
 * exceeded by at most the arguments of the calls in progress when it is reached; holding every call's arguments back
 * until it completes would have kept them from streaming on every Anthropic request (`max_tokens` is required there).
 */
export function capOutput(
  events: AsyncIterable<BackendEvent>,
  maxTokens: number,
  countsReasoning: boolean,
  onCap: () => void,
): AsyncIterable<BackendEvent> {
  return filtered(events, new CapFilter(maxTokens * CHARS_PER_TOKEN, countsReasoning, onCap));
}

/** Filters one after the other: what one lets out goes into the next; cut once any of them cut. */
class FilterChain implements EventFilter {
  constructor(private readonly filters: readonly EventFilter[]) {}

  get cut(): boolean {
    for (const filter of this.filters) if (filter.cut) return true;
    return false;
  }

  push(event: BackendEvent): BackendEvent[] {
    // Per streamed event: while each filter lets out one event (nearly always), no array beyond the filters' own.
    let out: BackendEvent[] | undefined;
    let one: BackendEvent = event;
    for (let i = 0; i < this.filters.length; i++) {
      out = (this.filters[i] as EventFilter).push(one);
      if (out.length !== 1) return i + 1 === this.filters.length ? out : this.from(i + 1, out);
      one = out[0] as BackendEvent;
    }
    return out ?? [event];
  }

  flush(): BackendEvent[] {
    // What each filter still held goes through the filters after it, which then flush in turn.
    const out: BackendEvent[] = [];
    for (let i = 0; i < this.filters.length; i++)
      out.push(...this.from(i + 1, (this.filters[i] as EventFilter).flush()));
    return out;
  }

  /** `events` through filters `start`.. in order. */
  private from(start: number, events: BackendEvent[]): BackendEvent[] {
    let out = events;
    for (let i = start; i < this.filters.length; i++) {
      const filter = this.filters[i] as EventFilter;
      const next: BackendEvent[] = [];
      for (const event of out) next.push(...filter.push(event));
      out = next;
    }
    return out;
  }
}

/**
 * The usage of an answer the kit cut: Cursor counts a turn only when it ends, and a cut turn is released before it
 * does, so its usage is estimated as the gateway bills it (gateway/limits): the request's input by
 * `estimateTokensOf`, the output handed out (text, reasoning, tool-call arguments) at {@link CHARS_PER_TOKEN}
 * characters a token. It follows the cut's `turn-end`, as Cursor's usage follows a turn's end; none when nothing was
 * handed out (what the gateway bills then too).
 */
class CutUsage implements EventFilter {
  readonly cut = false;
  private chars = 0;
  private reasoningChars = 0;

  constructor(
    private readonly wasCut: () => boolean,
    private readonly inputTokens: () => number,
  ) {}

  push(event: BackendEvent): BackendEvent[] {
    if (event.type === "text-delta") this.chars += event.text.length;
    else if (event.type === "reasoning-delta") {
      this.chars += event.text.length;
      this.reasoningChars += event.text.length;
    } else if (event.type === "tool-call") this.chars += event.arguments.length;
    else if (event.type === "turn-end" && this.wasCut() && this.chars > 0) return [event, this.usage()];
    return [event];
  }

  flush(): BackendEvent[] {
    return [];
  }

  private usage(): BackendEvent {
    const inputTokens = this.inputTokens();
    const outputTokens = Math.ceil(this.chars / CHARS_PER_TOKEN);
    return {
      type: "usage",
      usage: {
        inputTokens,
        outputTokens,
        totalTokens: inputTokens + outputTokens,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: Math.ceil(this.reasoningChars / CHARS_PER_TOKEN),
        source: "estimate",
      },
    };
  }
}

/** How the kit cuts a turn's answer: stop sequences, an output cap in tokens. */
export interface AnswerLimits {
  stopSequences?: readonly string[] | undefined;
  maxOutputTokens?: number | undefined;
  /** Whether the client asked for reasoning, so that it counts toward the cap (see {@link capOutput}). */
  reasoningRequested?: boolean | undefined;
  /** The request's input tokens by estimate, asked only when an answer is cut (its usage, see {@link CutUsage}). */
  inputTokens?: (() => number) | undefined;
}

/** Told which cut ended the answer (at most one does). */
export interface AnswerCuts {
  onStop(sequence: string): void;
  onLength(): void;
}

/**
 * The turn's events with the answer cut at the first stop sequence or at the output cap, whichever comes first (the
 * cap counts the text the stop sequences let out). Without either, the events themselves.
 */
export function cutAnswer(
  events: AsyncIterable<BackendEvent>,
  limits: AnswerLimits,
  cuts: AnswerCuts,
): AsyncIterable<BackendEvent> {
  const stops = limits.stopSequences ?? [];
  if (stops.length === 0 && limits.maxOutputTokens === undefined) return events;
  const chain: EventFilter[] = [];
  const sequences = stops.filter((stop) => stop !== "");
  if (sequences.length > 0) chain.push(new StopFilter(sequences, (sequence) => cuts.onStop(sequence)));
  if (limits.maxOutputTokens !== undefined) {
    const maxChars = limits.maxOutputTokens * CHARS_PER_TOKEN;
    chain.push(new CapFilter(maxChars, limits.reasoningRequested === true, () => cuts.onLength()));
  }
  if (chain.length === 0) return events;
  const inputTokens = limits.inputTokens;
  if (inputTokens !== undefined) chain.push(new CutUsage(() => chain.some((filter) => filter.cut), inputTokens));
  // One filter of them all: one promise per event, not one per cut.
  return filtered(events, chain.length === 1 ? (chain[0] as EventFilter) : new FilterChain(chain));
}
