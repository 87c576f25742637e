/**
 * Streams the scripted model's tokens (cursor-protocol.md §4.6): `thinking_delta`/`text_delta` chunks each followed
 * by a `token_delta` with the chunk's token count, paced at a token rate, with the `stall` and `drop` faults applied
 * at an exact token count.
 */

import { sleep, untilAborted } from "./queue.js";
import type { PlannedFault } from "./scripted-model.js";
import { tokenize } from "./scripted-model.js";
import type { TurnChannel } from "./turn-channel.js";

const DROP_FLUSH_MS = 30;

/** Thrown after the connection was dropped on purpose (`[[emu:drop N]]`). */
export class ConnectionDropped extends Error {
  constructor() {
    super("The emulator dropped the connection as scripted.");
    this.name = "ConnectionDropped";
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
    const tokens = tokenize(text);
    const paced = this.options.tokensPerSecond > 0;
    const gated = this.options.fault !== undefined && this.options.fault.kind !== "error";
    // Unpaced output still arrives as several deltas (up to ~32 per reply); paced or gated output goes token by token.
    const size = paced || gated ? 1 : Math.max(1, Math.floor(tokens.length / 32));
    for (let i = 0; i < tokens.length; i += size) {
      await this.gate();
      const chunk = tokens.slice(i, i + size);
      const value = { text: chunk.join("") };
      this.channel.send({
        message: {
          case: "interactionUpdate",
          value: { message: kind === "text" ? { case: "textDelta", value } : { case: "thinkingDelta", value } },
        },
      });
      this.count(chunk.length);
      if (paced) await sleep((1000 * chunk.length) / this.options.tokensPerSecond, this.channel.signal);
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
    if (fault === undefined || fault.kind === "error" || this.faultApplied) return;
    if (!atEnd && this.outputTokens < fault.afterTokens) return;
    this.faultApplied = true;
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
