/**
 * Code the server loads on first use (a door's handlers, each a chunk of dist/ of its own) can be gone by then: the
 * package was upgraded, or dist/ rebuilt, under the running server, and the new build names its chunks differently.
 * Such a load fails for good (the file the running code names will not come back), so it is not retried: every
 * request that needs it is answered 503 `server_updated`, saying to restart, and the failure is logged once.
 */
import { ProxyError } from "./errors.js";

/** The error of a request whose code could not be loaded (503, not retryable: only a restart helps). */
export function updatedOnDisk(cause: unknown): ProxyError<"backend_unavailable"> {
  return new ProxyError("backend_unavailable", "cursor-bridge was updated on disk while running; restart it.", {
    cause,
    detail: "server_updated",
    retryable: false,
  });
}

/**
 * `load` on the first call, its result kept for every later one. A failed load is reported once to `onFailure` and
 * kept too: every call then rejects with {@link updatedOnDisk}.
 */
export function loadOnce<T>(load: () => Promise<T>, onFailure: (error: unknown) => void): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      onFailure(error);
      throw updatedOnDisk(error);
    });
    return loaded;
  };
}
