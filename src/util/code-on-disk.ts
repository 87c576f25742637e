/**
 * Code the server loads on first use (a door's handlers, the stores' record schemas, the metrics registry: each a
 * chunk of dist/ of its own) can be gone by then: the package was upgraded, or dist/ rebuilt, under the running
 * server, and the new build names its chunks differently. Such a load fails for good (the file the running code names
 * will not come back), so it is not retried: every request that needs it is answered 503 `server_updated`, saying to
 * restart, and the failure is logged once, at error level, by the error handler that answers it first.
 *
 * Only a missing file means that. Any other failure (out of file descriptors or memory while reading the chunk, a
 * throw in the loaded code or in what the load then builds) is the request's error as it is, and the next call loads
 * again: a server that briefly ran out of file descriptors keeps its doors.
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
 * True for the failure of a load whose file is gone: Node's `ERR_MODULE_NOT_FOUND` (dist/'s ES modules,
 * `CURSOR_BRIDGE_SCRIPTS=0`), or `ENOENT` reading a script (its scripts, tools/script-loader.mjs, the default) or
 * a module resolved just before it went.
 */
export function isMissingCode(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, path } = error as { code?: unknown; path?: unknown };
  if (code === "ERR_MODULE_NOT_FOUND") return true;
  return code === "ENOENT" && typeof path === "string" && /\.[cm]?js$/.test(path);
}

/**
 * `load` on the first call, its result kept for every later one. A load that failed because its file is gone
 * ({@link isMissingCode}) is kept too: every call then rejects with one {@link updatedOnDisk} error (the same object,
 * so that it is logged once: {@link logUpdatedOnDisk}). Any other failure rejects that call with its own error and
 * is forgotten: the next call loads again.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    if (loaded !== undefined) return loaded;
    const attempt = load().catch((error: unknown) => {
      if (isMissingCode(error)) throw updatedOnDisk(error);
      if (loaded === attempt) loaded = undefined;
      throw error;
    });
    loaded = attempt;
    return attempt;
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
