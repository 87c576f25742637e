/**
 * Code the server loads on first use (a door's handlers, the stores' record schemas, the metrics registry: each a
 * chunk of dist/ of its own) can be gone by then: the package was upgraded, or dist/ rebuilt, under the running
 * server, and the new build names its chunks differently. Such a load fails for good (the file the running code names
 * will not come back), so it is not retried: every request that needs it is answered 503 `server_updated`, saying to
 * restart, and the failure is logged once, at error level, by the error handler that answers it first.
 */
import { ProxyError } from "./errors.js";
import type { Logger } from "./logger.js";

/** The error of a request whose code could not be loaded (503, not retryable: only a restart helps). */
export function updatedOnDisk(cause: unknown): ProxyError<"backend_unavailable"> {
  return new ProxyError("backend_unavailable", "cursor-bridge was updated on disk while running; restart it.", {
    cause,
    detail: "server_updated",
    retryable: false,
  });
}

/**
 * `load` on the first call, its result kept for every later one. A failed load is kept too: every call then rejects
 * with one {@link updatedOnDisk} error (the same object, so that it is logged once: {@link logUpdatedOnDisk}).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      throw updatedOnDisk(error);
    });
    return loaded;
  };
}

const logged = new WeakSet<ProxyError>();

/** Logs a failed load of the server's own code at error level, the first time its error answers a request. */
export function logUpdatedOnDisk(error: ProxyError, logger: Logger, path: string): void {
  if (error.detail !== "server_updated" || logged.has(error)) return;
  logged.add(error);
  logger.error(`cursor-bridge was updated on disk while running: code ${path} needs could not be loaded; restart it`, {
    error: error.cause,
  });
}
