/**
 * The events of a resumed turn, kept so that an identical request (a client retrying after a network error, or
 * racing itself) gets the first request's answer without a new Run: it reads the recording from the start and then
 * follows it live until the turn ends.
 */
import type { BackendEvent } from "../backend/types.js";

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

  constructor(
    /** History key of the request that owns the turn: only an identical request may replay it. */
    readonly requestKey: string,
  ) {}

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
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** A reader from the first event. Stopping early only stops this reader. */
  async *read(signal?: AbortSignal): AsyncGenerator<BackendEvent> {
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
