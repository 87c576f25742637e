/**
 * A small push-driven async queue: the request side of the HTTP/2 bidi `Run` (connect-node pulls from it and frames
 * each message). `push` resolves once the consumer has taken the item; `close` ends the iterable after queued items;
 * `fail` rejects every pending and future push. Nothing is left pending after `close`/`fail`.
 */

interface Pending<T> {
  value: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Push side + AsyncIterable side of the queue. */
export interface AsyncQueue<T> extends AsyncIterable<T> {
  push(value: T): Promise<void>;
  /** No more pushes; the iterable ends once queued items are taken. */
  close(): void;
  /** Rejects queued and future pushes with `error` and ends the iterable now. */
  fail(error: unknown): void;
  readonly closed: boolean;
}

/**
 * The queue: one object that is both the push side and its own iterator. A class, not a closure factory, so an open
 * run holds a single object instead of a context and a closure per operation (heap per parked turn).
 */
class PushQueue<T> implements AsyncQueue<T>, AsyncIterator<T> {
  private readonly items: Pending<T>[] = [];
  private waiter: ((result: IteratorResult<T>) => void) | undefined;
  private ended = false;
  private failure: { error: unknown } | undefined;

  get closed(): boolean {
    return this.ended;
  }

  push(value: T): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure.error);
    if (this.ended) return Promise.reject(new Error("Cannot send: the request stream is closed."));
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w({ done: false, value });
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => this.items.push({ value, resolve, reject }));
  }

  close(): void {
    this.ended = true;
    if (this.items.length === 0) this.finishWaiter();
  }

  fail(error: unknown): void {
    if (this.failure === undefined) this.failure = { error };
    this.ended = true;
    for (const item of this.items.splice(0)) item.reject(this.failure.error);
    this.finishWaiter();
  }

  next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) {
      item.resolve();
      return Promise.resolve({ done: false, value: item.value });
    }
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.fail(this.failure?.error ?? new Error("The request stream was closed."));
    return Promise.resolve({ done: true, value: undefined });
  }

  // connect-es aborts a request iterable through throw() when the call fails (makeIterableAbortable).
  throw(error: unknown): Promise<IteratorResult<T>> {
    this.fail(error);
    return Promise.resolve({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this;
  }

  private finishWaiter(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.({ done: true, value: undefined });
  }
}

/** Creates an {@link AsyncQueue}. Single consumer. */
export function createAsyncQueue<T>(): AsyncQueue<T> {
  return new PushQueue<T>();
}
