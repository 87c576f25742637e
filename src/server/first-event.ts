/**
 * Waits for the first event of a backend segment before an HTTP response is committed, so failures that happen
 * before any output (auth, quota, unknown model upstream, connection refused) become real HTTP statuses instead of
 * an error frame inside a 200 stream.
 */

/** The first result plus an iterable that replays it and continues with the rest. */
export interface PrimedIterable<T> {
  iterable: AsyncIterable<T>;
  /** Stops the underlying iterator (client went away before we started streaming). */
  cancel(): Promise<void>;
}

/** Pulls the first item (throwing its error, if any) and returns an iterable over the whole sequence. */
export async function primeFirst<T>(source: AsyncIterable<T>): Promise<PrimedIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  let replayed = false;
  const iterable: AsyncIterable<T> = {
    [Symbol.asyncIterator]: () => ({
      // Not `async`: after the replay, next() hands out the source's own promise (no extra hop per item).
      next: () => {
        if (replayed) return iterator.next();
        replayed = true;
        return Promise.resolve(first);
      },
      return: async (value?: unknown) => {
        await iterator.return?.(value);
        return { done: true, value: undefined };
      },
    }),
  };
  return {
    iterable,
    cancel: async () => {
      await iterator.return?.();
    },
  };
}
