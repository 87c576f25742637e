/**
 * Whether transport `auto` should try HTTP/2 for the next call to one base URL.
 *
 * HTTP/2 is tried for every call. A call whose HTTP/2 connection could not be set up falls back to HTTP/1.1 for that
 * call alone (cursor-api.ts), and the failure is counted here only when HTTP/1.1 then answered: that is evidence that
 * HTTP/2 is what does not work on this path, not the network or the server. After `FAILURES_BEFORE_BACKOFF` such
 * failures in a row, calls go to HTTP/1.1 directly for a pause (doubling from `initialMs` up to `maxMs`); when the pause
 * is over the next call probes HTTP/2 again. Any HTTP/2 answer resets the count. Stream-level errors (a reset stream,
 * a Connect error answer) never reach this object.
 *
 * Concurrent calls that failed on the same broken connection count once: a failure counts only when no other
 * success or failure was recorded since its attempt began.
 */

/** Consecutive HTTP/2 connection failures after which calls skip HTTP/2 for a pause. */
export const FAILURES_BEFORE_BACKOFF = 2;

/** Backoff of {@link Http2Health}. */
export interface Http2BackoffOptions {
  /** First pause after repeated failures. @default 30 s */
  initialMs: number;
  /** Longest pause. @default 10 min */
  maxMs: number;
}

export const DEFAULT_HTTP2_BACKOFF: Http2BackoffOptions = { initialMs: 30_000, maxMs: 10 * 60_000 };

/** HTTP/2 health of one base URL. */
export class Http2Health {
  private failures = 0;
  private skipUntil = 0;
  /** Bumped by every recorded outcome; an attempt remembers the value it started with. */
  private generation = 0;

  constructor(
    private readonly backoff: Http2BackoffOptions,
    private readonly now: () => number,
  ) {}

  /** True when the next call should try HTTP/2 (false only during a backoff pause). */
  shouldTry(): boolean {
    return this.failures < FAILURES_BEFORE_BACKOFF || this.now() >= this.skipUntil;
  }

  /** Marks the start of an HTTP/2 attempt; pass the result to {@link failed}. */
  begin(): number {
    return this.generation;
  }

  /** HTTP/2 answered (any status): it works. */
  succeeded(): void {
    this.failures = 0;
    this.skipUntil = 0;
    this.generation++;
  }

  /**
   * The HTTP/2 connection of the attempt begun at `attempt` failed and HTTP/1.1 answered. Returns the pause now in
   * force (0 when HTTP/2 is still tried for the next call).
   */
  failed(attempt: number): number {
    if (attempt === this.generation) {
      this.generation++;
      this.failures++;
      const excess = this.failures - FAILURES_BEFORE_BACKOFF;
      const pause = excess < 0 ? 0 : Math.min(this.backoff.initialMs * 2 ** excess, this.backoff.maxMs);
      this.skipUntil = this.now() + pause;
    }
    return Math.max(0, this.skipUntil - this.now());
  }
}
