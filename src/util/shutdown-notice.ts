/**
 * How a stopping server ends the turns still running when its drain time is up (server/listen.ts drains, cli/serve
 * decides when): each turn watches the notice while it runs (surfaces/kit/run-surface.ts), and once it is given the
 * turn is aborted with the notice's error, which its door renders as its own final error (an SSE error chunk, an
 * Anthropic `event: error`, `response.failed`) or, before the answer started, as its error response.
 *
 * A set of callbacks rather than an AbortSignal: thousands of streams in flight would each add a listener to one
 * signal, which Node reports as a leak past ten.
 */
import { ProxyError } from "./errors.js";

/** The error of a request the server ends or refuses because it is shutting down (503, retryable). */
export function shuttingDown(started: boolean): ProxyError<"backend_unavailable"> {
  return new ProxyError(
    "backend_unavailable",
    started
      ? "cursor-bridge is shutting down and ended this answer before it was complete; send the request again."
      : "cursor-bridge is shutting down and takes no new requests; send the request again.",
    { detail: "server_shutting_down", retryable: true },
  );
}

/** The notice a stopping server gives the turns still running. */
export class ShutdownNotice {
  private readonly watchers = new Set<(reason: ProxyError) => void>();
  private reason: ProxyError | undefined;

  /** Calls `onNotice` once the notice is given (at once when it already was); returns what stops watching. */
  watch(onNotice: (reason: ProxyError) => void): () => void {
    if (this.reason !== undefined) {
      onNotice(this.reason);
      return () => {};
    }
    this.watchers.add(onNotice);
    return () => this.watchers.delete(onNotice);
  }

  /** How many turns watch the notice now. */
  get watching(): number {
    return this.watchers.size;
  }

  /** Gives the notice (once): every watcher is called with `reason`, and so is any later one. */
  give(reason: ProxyError): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const watchers = [...this.watchers];
    this.watchers.clear();
    for (const onNotice of watchers) onNotice(reason);
  }
}
