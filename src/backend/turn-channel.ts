/**
 * The hand-off between the pump that reads a Run stream (run-session.ts) and the segment the caller iterates
 * (agent-turn.ts). Items are delivered in order; a failure is delivered after the items already queued.
 */
import type { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import type { BackendEvent } from "./types.js";

/** What the pump tells the segment. */
export type ChannelItem =
  | { type: "event"; event: BackendEvent }
  /** The tool-call batch window elapsed: the segment may pause on its pending calls. */
  | { type: "pause" }
  /**
   * A client tool call whose arguments were handed out forming (`tool-call-delta`) that will not reach the caller as a
   * call: no `tool-call` follows for it (argument-streams.ts, `DropReason`).
   */
  | { type: "dropped"; toolCallId: string }
  /** `interaction_update.turn_ended` arrived (§4.6). */
  | { type: "turn-ended" }
  /**
   * An exec the turn's surface executor runs, started when the segment reaches it: after the events queued before it
   * (an MCP call's streamed arguments) have reached the caller.
   */
  | { type: "run"; start: () => void }
  /** The server closed the stream cleanly. */
  | { type: "end" };

/** Told, as it happens, of what the channel receives while nobody reads it (a parked turn: agent-turn.ts). */
export interface ChannelWatcher {
  /** `item` was queued, or (undefined) the channel failed. Called synchronously: it must not throw. */
  channelNotice(item: ChannelItem | undefined): void;
}

/**
 * Single-consumer queue of {@link ChannelItem}s. It sits on the per-event hot path, so a wait allocates only its
 * promise: the channel itself is the abort listener, and it stays registered on the caller's signal across waits
 * (one add per segment instead of an add and a remove per event) until another signal replaces it or
 * {@link release} drops it.
 */
export class TurnChannel {
  private readonly items: ChannelItem[] = [];
  private failure: ProxyError | undefined;
  private waiter: { resolve: () => void; reject: (reason: unknown) => void } | undefined;
  /** The signal the channel listens to (the last one a wait was given). */
  private watched: AbortSignal | undefined;
  /** Told of every item and of the failure while set ({@link watchItems}). */
  private watcher: ChannelWatcher | undefined;

  push(item: ChannelItem): void {
    if (this.failure !== undefined) return;
    this.items.push(item);
    this.wake();
    this.watcher?.channelNotice(item);
  }

  /** Fails the channel (first failure wins); queued items are still delivered first. */
  fail(error: ProxyError): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.wake();
    this.watcher?.channelNotice(undefined);
  }

  /** Tells `watcher` of what arrives from now on (undefined: stop telling); a failure that came already, at once. */
  watchItems(watcher: ChannelWatcher | undefined): void {
    this.watcher = watcher;
    if (watcher === undefined) return;
    const ended = this.items.find((item) => item.type === "end" || item.type === "turn-ended");
    if (ended !== undefined) watcher.channelNotice(ended);
    else if (this.failure !== undefined) watcher.channelNotice(undefined);
  }

  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** The next queued item without waiting; undefined when none is queued (a failure is left to {@link next}). */
  poll(): ChannelItem | undefined {
    return this.items.shift();
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

  /**
   * The next item while a Run is drained after `turn_ended`; undefined when the drain is over: the end of the stream,
   * or a failure or no end by `deadline` (both logged). Throws when `signal` aborts.
   */
  async nextDraining(
    deadline: number,
    signal: AbortSignal | undefined,
    logger: Logger,
  ): Promise<ChannelItem | undefined> {
    let item: ChannelItem | "timeout";
    try {
      item = await this.nextBefore(deadline, signal);
    } catch (error) {
      if (signal?.aborted === true) throw error;
      logger.debug("Run did not end cleanly after turn_ended", { error });
      return undefined;
    }
    if (item === "timeout") {
      logger.debug("Run did not end cleanly after turn_ended", { error: "no end of stream in time" });
      return undefined;
    }
    return item.type === "end" ? undefined : item;
  }

  /** Stops listening to the last signal (its segment is over; a parked turn must not keep the request's signal). */
  release(): void {
    this.watch(undefined);
  }

  /** The watched signal aborted: the pending wait rejects with its reason (EventListener object, no closure). */
  handleEvent(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(this.watched?.reason);
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    if (signal !== this.watched) this.watch(signal);
    return new Promise<void>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private watch(signal: AbortSignal | undefined): void {
    this.watched?.removeEventListener("abort", this);
    this.watched = signal;
    signal?.addEventListener("abort", this);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve();
  }
}
