/**
 * The hand-off between the pump that reads a Run stream (run-session.ts) and the segment the caller iterates
 * (agent-turn.ts). Items are delivered in order; a failure is delivered after the items already queued.
 */
import type { ProxyError } from "../util/errors.js";
import type { BackendEvent } from "./types.js";

/** What the pump tells the segment. */
export type ChannelItem =
  | { type: "event"; event: BackendEvent }
  /** The tool-call batch window elapsed: the segment may pause on its pending calls. */
  | { type: "pause" }
  /** `interaction_update.turn_ended` arrived (§4.6). */
  | { type: "turn-ended" }
  /** The server closed the stream cleanly. */
  | { type: "end" };

/** Single-consumer queue of {@link ChannelItem}s. */
export class TurnChannel {
  private readonly items: ChannelItem[] = [];
  private failure: ProxyError | undefined;
  private waiter: (() => void) | undefined;

  push(item: ChannelItem): void {
    if (this.failure !== undefined) return;
    this.items.push(item);
    this.wake();
  }

  /** Fails the channel (first failure wins); queued items are still delivered first. */
  fail(error: ProxyError): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.wake();
  }

  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** The next item; rejects with the failure, or with `canceled` when `signal` aborts first. */
  async next(signal?: AbortSignal): Promise<ChannelItem> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) return item;
      if (this.failure !== undefined) throw this.failure;
      signal?.throwIfAborted();
      await this.wait(signal);
    }
  }

  /**
   * Like {@link next}, but resolves `"timeout"` once `performance.now()` passes `deadline` with nothing queued. The
   * timer is armed only when the call has to wait (after `turn_ended` the end of the stream is usually queued
   * already), which keeps the per-turn `AbortSignal.timeout` + `AbortSignal.any` pair off the hot path.
   */
  async nextBefore(deadline: number, signal?: AbortSignal): Promise<ChannelItem | "timeout"> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    try {
      for (;;) {
        const item = this.items.shift();
        if (item !== undefined) return item;
        if (this.failure !== undefined) throw this.failure;
        signal?.throwIfAborted();
        const remaining = deadline - performance.now();
        if (timedOut || remaining <= 0) return "timeout";
        timer ??= setTimeout(() => {
          timedOut = true;
          this.wake();
        }, remaining);
        await this.wait(signal);
      }
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiter = undefined;
        reject(signal?.reason);
      };
      this.waiter = () => {
        signal?.removeEventListener("abort", onAbort);
        this.waiter = undefined;
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private wake(): void {
    this.waiter?.();
  }
}
