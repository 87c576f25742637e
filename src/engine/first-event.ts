/**
 * Waits for the first event of a backend segment before an HTTP response is committed, so failures that happen
 * before any output (auth, quota, unknown model upstream, connection refused) become real HTTP statuses instead of
 * an error frame inside a 200 stream.
 */

/** Pulls the first item (throwing its error, if any) and returns an iterable that replays it, then the rest. */
export async function primeFirst<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  let replayed = false;
  return {
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
}
