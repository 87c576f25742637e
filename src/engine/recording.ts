/**
 * The events of a resumed turn, kept so that an identical request (a client retrying after a network error, or
 * racing itself) gets the first request's answer without a new Run: it reads the recording from the start and then
 * follows it live until the turn ends.
 *
 * The turn runs while anyone reads it: on a signal of its own ({@link runSignal}), which aborts only once the request
 * that resumed it went away and no replay is reading either. A retry that replays the answer therefore keeps
 * receiving it when the first request's client disconnects (the usual reason it retried).
 */
import type { BackendEvent } from "../backend/types.js";
import { ProxyError } from "../util/errors.js";

/** Append-only event log with any number of readers. */
export class TurnRecording {
  private readonly events: BackendEvent[] = [];
  private ended = false;
  private failure: unknown;
  private waiters: Array<() => void> = [];

  /**
   * The turn the recording is of, once started: a replay names the model its answer named
   * (EngineTurn.servedModel, read through, since a replay may start before the turn has named it).
   */
  servedBy: { readonly servedModel?: string | undefined } | undefined;

  /** Replays reading now. */
  private readers = 0;
  /** The request that resumed the turn stopped reading it (its client went away). */
  private ownerGone = false;
  private readonly run = new AbortController();
  private readonly ownerSignal: AbortSignal | undefined;

  constructor(
    /** History key of the request that owns the turn: only an identical request may replay it. */
    readonly requestKey: string,
    /** The signal of the request that resumed the turn (it leaves when that aborts). */
    ownerSignal?: AbortSignal,
  ) {
    this.ownerSignal = ownerSignal;
    if (ownerSignal?.aborted === true) this.ownerLeft(ownerSignal.reason);
    else ownerSignal?.addEventListener("abort", this);
  }

  /** What the turn runs on: aborted once nobody reads it any more. */
  get runSignal(): AbortSignal {
    return this.run.signal;
  }

  /** The owner's signal aborted (EventListener object: no closure per turn). */
  handleEvent(): void {
    this.ownerLeft(this.ownerSignal?.reason);
  }

  /**
   * The request that resumed the turn stopped reading it. True when a replay still reads it: the caller then keeps
   * the turn running to its end (recording it); false when the turn is canceled (nobody reads it).
   */
  ownerLeft(reason?: unknown): boolean {
    this.ownerGone = true;
    this.ownerSignal?.removeEventListener("abort", this);
    this.cancelIfUnread(reason);
    return this.readers > 0;
  }

  private cancelIfUnread(reason?: unknown): void {
    if (!this.ownerGone || this.readers > 0 || this.ended || this.run.signal.aborted) return;
    this.run.abort(reason ?? new ProxyError("canceled", "Nobody reads the resumed turn any more."));
  }

  /** The model the recorded turn's own answer names; undefined until it is known. */
  get servedModel(): string | undefined {
    return this.servedBy?.servedModel;
  }

  /** True once the turn ended (normally or not). */
  get done(): boolean {
    return this.ended;
  }

  push(event: BackendEvent): void {
    this.events.push(event);
    this.wake();
  }

  /** Ends the recording; `error` makes every reader throw it after the recorded events. */
  finish(error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = error;
    this.ownerSignal?.removeEventListener("abort", this);
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** A reader from the first event. Stopping early only stops this reader. */
  async *read(signal?: AbortSignal): AsyncGenerator<BackendEvent> {
    this.readers++;
    try {
      yield* this.follow(signal);
    } finally {
      this.readers--;
      this.cancelIfUnread();
    }
  }

  private async *follow(signal: AbortSignal | undefined): AsyncGenerator<BackendEvent> {
    let index = 0;
    for (;;) {
      while (index < this.events.length) {
        const event = this.events[index++];
        if (event !== undefined) yield event;
      }
      if (this.ended) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal?.addEventListener("abort", onAbort, { once: true });
        this.waiters.push(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
  }
}
