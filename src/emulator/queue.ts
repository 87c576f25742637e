/** A minimal single-consumer async queue used to turn pushed messages into an AsyncIterable. */

/** Push values, then close or fail; iterate once. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: (() => void) | undefined;
  private done = false;
  private error: { reason: unknown } | undefined;

  /** Adds a value; ignored after close/fail. */
  push(value: T): void {
    if (this.done) return;
    this.items.push(value);
    this.wake();
  }

  /** Ends the iteration after the queued values. */
  close(): void {
    this.done = true;
    this.wake();
  }

  /** Ends the iteration with an error after the queued values. */
  fail(reason: unknown): void {
    if (this.done) return;
    this.error = { reason };
    this.done = true;
    this.wake();
  }

  /** Values pushed but not yet taken by the consumer. */
  get size(): number {
    return this.items.length;
  }

  /** True once closed or failed. */
  get closed(): boolean {
    return this.done;
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.done) {
        if (this.error !== undefined) throw this.error.reason;
        return;
      }
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first; never leaves a timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Rejects with the signal's reason once it aborts (a wait that only the client can end). */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
