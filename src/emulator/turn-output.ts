/**
 * Streams the scripted model's tokens (docs/protocol.md §4.6): `thinking_delta`/`text_delta` chunks each followed
 * by a `token_delta` with the chunk's token count, paced at a token rate, with the `stall` and `drop` faults applied
 * at an exact token count.
 */

import { sleep, untilAborted } from "./queue.js";
import type { PlannedFault } from "./scripted-model.js";
import type { TurnChannel } from "./turn-channel.js";

const DROP_FLUSH_MS = 30;

/** Thrown after the connection was dropped on purpose (`[[emu:drop N]]`). */
export class ConnectionDropped extends Error {
  constructor() {
    super("The emulator dropped the connection as scripted.");
    this.name = "ConnectionDropped";
  }
}

/**
 * Thrown to end the turn's stream cleanly without `turn_ended` (`[[emu:truncate]]`, cursor-protocol-addendum-3.md
 * T7): the transport ends the stream with no error, as a cut-off Cursor stream does.
 */
export class TurnTruncated extends Error {
  constructor() {
    super("The emulator ended the stream without turn_ended as scripted.");
    this.name = "TurnTruncated";
  }
}

/** Options of {@link TokenOutput}. */
export interface TokenOutputOptions {
  /** 0 = as fast as possible. */
  tokensPerSecond: number;
  fault: PlannedFault | undefined;
  /** Destroys the underlying connection. */
  drop(): void;
}

function isSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return /\s/.test(String.fromCharCode(code));
}

/** The number of tokenize() tokens of `text` (runs of non-space; all-space text is one token). */
export function countTokens(text: string): number {
  let runs = 0;
  let inRun = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inRun) runs++;
    inRun = !space;
  }
  return runs === 0 && text.length > 0 ? 1 : runs;
}

/** Where the token `skip` tokens after the one starting at `from` starts (tokens end in their trailing space). */
export function tokenStart(text: string, from: number, skip: number): number {
  let seen = 0;
  let inRun = false;
  let leading = true;
  for (let i = from; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inRun) {
      // The first run belongs to the token starting at `from` (with its leading space); each later run starts one.
      if (!leading) {
        seen++;
        if (seen === skip) return i;
      }
      leading = false;
    }
    inRun = !space;
  }
  return text.length;
}

/** Counts and paces output tokens for one turn. */
export class TokenOutput {
  /** Σ of every token_delta sent: the turn's output tokens. */
  outputTokens = 0;
  private faultApplied = false;

  constructor(
    private readonly channel: TurnChannel,
    private readonly options: TokenOutputOptions,
  ) {}

  /** Streams text as `text_delta` (or `thinking_delta`) chunks, each followed by its `token_delta`. */
  async stream(text: string, kind: "text" | "thinking"): Promise<void> {
    const paced = this.options.tokensPerSecond > 0;
    const fault = this.options.fault?.kind;
    const gated = fault === "stall" || fault === "drop" || fault === "truncate";
    const total = countTokens(text);
    // Unpaced output still arrives as several deltas (up to ~32 per reply); paced or gated output goes token by token.
    const size = paced || gated ? 1 : Math.max(1, Math.floor(total / 32));
    // Chunks are slices of `text` cut at token starts (the tokens of tokenize(), never materialised one by one: an
    // echoed multi-megabyte message would otherwise be an array of ~a million small strings per turn).
    let start = 0;
    for (let i = 0; i < total; i += size) {
      await this.gate();
      const count = Math.min(size, total - i);
      const end = i + count >= total ? text.length : tokenStart(text, start, count);
      const value = { text: text.slice(start, end) };
      start = end;
      this.channel.send({
        message: {
          case: "interactionUpdate",
          value: { message: kind === "text" ? { case: "textDelta", value } : { case: "thinkingDelta", value } },
        },
      });
      this.count(count);
      if (paced) await sleep((1000 * count) / this.options.tokensPerSecond, this.channel.signal);
    }
  }

  /** Reports tokens that are not streamed as text (tool-call arguments). */
  count(tokens: number): void {
    if (tokens <= 0) return;
    this.outputTokens += tokens;
    this.channel.send({
      message: { case: "interactionUpdate", value: { message: { case: "tokenDelta", value: { tokens } } } },
    });
  }

  /** Applies a stall/drop fault whose token count was not reached by the output itself. */
  async finish(): Promise<void> {
    await this.gate(true);
  }

  private async gate(atEnd = false): Promise<void> {
    const fault = this.options.fault;
    if (fault === undefined || fault.kind === "error" || fault.kind === "overflow" || this.faultApplied) return;
    const afterTokens = fault.kind === "truncate" ? 1 : fault.afterTokens;
    if (!atEnd && this.outputTokens < afterTokens) return;
    this.faultApplied = true;
    if (fault.kind === "truncate") throw new TurnTruncated();
    if (fault.kind === "drop") {
      // Let the N tokens reach the client first: wait until the transport took every queued message, then give the
      // socket a moment to write them.
      while (this.channel.outbox.size > 0) await sleep(5, this.channel.signal);
      await sleep(DROP_FLUSH_MS, this.channel.signal);
      this.options.drop();
      throw new ConnectionDropped();
    }
    // A stall makes no progress at all: only the channel's heartbeats flow until the client gives up.
    await untilAborted(this.channel.signal);
  }
}
