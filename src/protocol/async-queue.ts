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

/** Creates an {@link AsyncQueue}. Single consumer. */
export function createAsyncQueue<T>(): AsyncQueue<T> {
  const items: Pending<T>[] = [];
  let waiter: ((result: IteratorResult<T>) => void) | undefined;
  let closed = false;
  let failure: { error: unknown } | undefined;

  const finishWaiter = () => {
    const w = waiter;
    waiter = undefined;
    w?.({ done: true, value: undefined });
  };

  const iterator: AsyncIterator<T> = {
    next() {
      const item = items.shift();
      if (item !== undefined) {
        item.resolve();
        return Promise.resolve({ done: false, value: item.value });
      }
      if (closed) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve) => {
        waiter = resolve;
      });
    },
    return() {
      queue.fail(failure?.error ?? new Error("The request stream was closed."));
      return Promise.resolve({ done: true, value: undefined });
    },
    // connect-es aborts a request iterable through throw() when the call fails (makeIterableAbortable).
    throw(error: unknown) {
      queue.fail(error);
      return Promise.resolve({ done: true, value: undefined });
    },
  };

  const queue: AsyncQueue<T> = {
    get closed() {
      return closed;
    },
    push(value) {
      if (failure !== undefined) return Promise.reject(failure.error);
      if (closed) return Promise.reject(new Error("Cannot send: the request stream is closed."));
      if (waiter !== undefined) {
        const w = waiter;
        waiter = undefined;
        w({ done: false, value });
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => items.push({ value, resolve, reject }));
    },
    close() {
      closed = true;
      if (items.length === 0) finishWaiter();
    },
    fail(error) {
      if (failure === undefined) failure = { error };
      closed = true;
      for (const item of items.splice(0)) item.reject(failure.error);
      finishWaiter();
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return queue;
}
