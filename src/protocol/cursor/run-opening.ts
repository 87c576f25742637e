/**
 * What bounds one Run's open (OpenRunOptions `signal` and `deadlineMs`): the caller's abort and the open's deadline,
 * watched with one listener and one timer for the whole open (the token, the HTTP/2 attempt, an HTTP/1.1 fallback),
 * and no AbortController: this runs on every turn's way to its first token, where a controller costs about 20 µs and
 * each listener added to and removed from a signal several. The Run stream itself never sees the caller's signal: a
 * stop aborts the stream being opened, or fails the wait for the token; once the open settles, {@link release} drops
 * the timer, the listener and the stream, so an open Run (a parked turn's, for minutes) keeps none of them.
 *
 * The listener and the timer are armed in the check phase of the event-loop turn the open starts in (`setImmediate`),
 * after the Run's request has left (node's HTTP/2 sends it from a native immediate, which runs first), not before it:
 * they cost about 20 µs under load, and the wait for Cursor's answer is idle time. A caller's abort in between is
 * seen then, from `signal.aborted`, and the timer is armed for what is left of the deadline. The open's decisions
 * ({@link check}: after the token, before a fallback, before it returns the Run) read `signal.aborted` too, so an
 * open that gets that far before the immediate runs (an answer or a failure within its first turn) still sees it.
 */
import { ProxyError } from "../../util/errors.js";
import { abortedError } from "./run-stream.js";

/** What a stop aborts while a Run opens. */
interface Abortable {
  abort(reason?: unknown): void;
}

/** The error of an open past its deadline: no answer at all counts as a stall (docs/protocol.md §4.2). */
export function openDeadlineError(deadlineMs: number): ProxyError {
  return new ProxyError("timeout", `Cursor did not answer the Run within ${deadlineMs} ms.`, { detail: "stalled" });
}

/** The open's deadline passed (a function, not a closure per open). */
function expire(opening: RunOpening, deadlineMs: number): void {
  opening.stop(openDeadlineError(deadlineMs));
}

/** Arms the open's watchers (a function, not a closure per open). */
function arm(opening: RunOpening): void {
  opening.arm();
}

/** Tells the watcher that the Run's request has left, when the watchers were armed already. */
function tellSent(opening: RunOpening): void {
  opening.sentLate();
}

/** One Run's open; {@link release} it when the open settles, whichever way. */
export class RunOpening implements EventListenerObject {
  /** Why the open stopped (the caller's abort, or the deadline); undefined while it goes on. */
  stopped: ProxyError | undefined;
  private signal: AbortSignal | undefined;
  private readonly deadlineMs: number | undefined;
  /** `performance.now()` when the open started: the deadline counts from there. */
  private readonly startedAt: number;
  /** Arms the listener and the timer ({@link arm}); undefined once it ran or the open settled. */
  private arming: ReturnType<typeof setImmediate> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The Run being opened: a stop aborts it. */
  private run: Abortable | undefined;
  /** Rejects the wait in progress (the token): a stop ends it. */
  private rejectWait: ((error: ProxyError) => void) | undefined;
  /** Told that the Run's request has left ({@link watch}); called once, by {@link arm} or {@link sentLate}. */
  private sent: (() => void) | undefined;
  /** Calls {@link sentLate}: `sent` came after the watchers were armed (or with none to arm). */
  private telling: ReturnType<typeof setImmediate> | undefined;

  constructor(signal: AbortSignal | undefined, deadlineMs: number | undefined) {
    this.deadlineMs = deadlineMs;
    this.startedAt = deadlineMs === undefined ? 0 : performance.now();
    if (signal?.aborted === true) {
      this.stopped = abortedError(signal.reason);
      return;
    }
    this.signal = signal;
    if (signal !== undefined || deadlineMs !== undefined) this.arming = setImmediate(arm, this);
  }

  /** Starts watching the caller's signal and the deadline (see the module's comment: once the request has left). */
  arm(): void {
    this.arming = undefined;
    const signal = this.signal;
    if (signal?.aborted === true) {
      this.stop(abortedError(signal.reason));
      return;
    }
    signal?.addEventListener("abort", this, { once: true });
    const deadlineMs = this.deadlineMs;
    if (deadlineMs !== undefined) {
      const left = deadlineMs - (performance.now() - this.startedAt);
      if (left <= 0) this.stop(openDeadlineError(deadlineMs));
      else this.timer = setTimeout(expire, left, this, deadlineMs);
    }
    // With a signal and no deadline too: `sent` came before the watchers were armed, and nothing else tells it.
    this.tellSent();
  }

  /**
   * Calls the {@link watch}er's `sent` once, unless the open stopped. It runs from an immediate: what it throws would
   * be uncaught there, so it stops the open instead, which then fails with it.
   */
  private tellSent(): void {
    const sent = this.sent;
    this.sent = undefined;
    if (this.stopped !== undefined || sent === undefined) return;
    try {
      sent();
    } catch (error) {
      this.stop(ProxyError.from(error));
    }
  }

  /** See {@link watch}: the watchers were armed before the Run was being opened. */
  sentLate(): void {
    this.telling = undefined;
    this.tellSent();
  }

  /** The caller's signal aborted (EventListener object: no closure per open). */
  handleEvent(): void {
    this.stop(abortedError(this.signal?.reason));
  }

  /**
   * Throws why the open stopped, if it did. Before {@link arm} ran, a caller's abort is seen here, from
   * `signal.aborted`: an open that settles (or fails toward a fallback) in the turn it started in still sees it.
   */
  check(): void {
    const signal = this.signal;
    if (this.stopped === undefined && signal?.aborted === true) this.stop(abortedError(signal.reason));
    if (this.stopped !== undefined) throw this.stopped;
  }

  /** `promise`, unless the open stops first (what `promise` does goes on: the token source's work is shared). */
  wait<T>(promise: Promise<T>): Promise<T> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    if (this.signal === undefined && this.deadlineMs === undefined) return promise;
    return new Promise<T>((resolve, reject) => {
      this.rejectWait = reject;
      promise.then(
        (value) => {
          this.rejectWait = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.rejectWait = undefined;
          reject(error);
        },
      );
    });
  }

  /**
   * `run` is being opened: a stop aborts it (at once when the open has stopped already). `sent` is called once its
   * request has left: in the check phase of the turn it was written in (with the watchers, {@link arm}), or of the
   * next one when they were armed before the Run was (its token took a turn of the event loop or more).
   */
  watch(run: Abortable, sent?: () => void): void {
    if (this.stopped !== undefined) {
      run.abort(this.stopped);
      return;
    }
    this.run = run;
    if (sent === undefined) return;
    this.sent = sent;
    if (this.arming === undefined) this.telling = setImmediate(tellSent, this);
  }

  /** Stops the open with `reason` (once): the Run being opened is aborted, the wait in progress rejected. */
  stop(reason: ProxyError): void {
    if (this.stopped !== undefined) return;
    this.stopped = reason;
    const run = this.run;
    const reject = this.rejectWait;
    this.release();
    run?.abort(reason);
    reject?.(reason);
  }

  /** The open settled: drops the timer, the listener, the Run and the wait, so that nothing of the open stays. */
  release(): void {
    if (this.arming !== undefined) {
      // Settled before it was armed: nothing to remove.
      clearImmediate(this.arming);
      this.arming = undefined;
    } else {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = undefined;
      this.signal?.removeEventListener("abort", this);
    }
    if (this.telling !== undefined) clearImmediate(this.telling);
    this.telling = undefined;
    this.signal = undefined;
    this.run = undefined;
    this.rejectWait = undefined;
    this.sent = undefined;
  }
}
