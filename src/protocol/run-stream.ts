/**
 * One open `agent.v1.AgentService/Run` conversation turn, whatever the transport (cursor-protocol.md §4.2, §4.3),
 * and its HTTP/2 implementation: a connect-es bidi call whose request side is an {@link AsyncQueue}, so connect-node
 * does the framing.
 */
import { createClient } from "@connectrpc/connect";
import type { AgentClientMessage, AgentServerMessage } from "../gen/agent/v1/agent_pb.js";
import { AgentService } from "../gen/agent/v1/agent_service_pb.js";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { createAsyncQueue } from "./async-queue.js";
import { type ErrorMappingContext, toProxyError } from "./error-mapping.js";
import type { TransportPool } from "./transports.js";

/** One open Run, over HTTP/2 (`Run`) or HTTP/1.1 (`RunSSE` + `BidiAppend`). */
export interface RunStream {
  readonly transport: "http2" | "http1";
  readonly requestId: string;
  /**
   * Sends one client message. h2: a frame on the bidi stream; h1: one BidiAppend (hex `data`, `request_id`,
   * `append_seqno` 0,1,2…). Sends are serialised in call order, so seqnos never reorder. Rejects with a ProxyError
   * once the stream has failed, ended or been aborted.
   */
  send(message: AgentClientMessage): Promise<void>;
  /**
   * Server messages. Single consumer; completes on a clean end-of-stream and throws a ProxyError otherwise.
   * Leaving the loop early aborts the run.
   */
  messages(): AsyncIterable<AgentServerMessage>;
  /** Half-closes our side (h2); a no-op on h1. */
  closeSend(): void;
  /** Tears everything down; idempotent; nothing is left pending. */
  abort(reason?: unknown): void;
  /** Serialized client-message bytes sent so far. */
  readonly bytesSent: number;
}

/** Result of starting a run: the stream, and whether the transport produced a response. */
export interface StartedRun {
  stream: RunStream;
  /** `ok: true` once the server answered (any answer); `ok: false` when the call failed before any response. */
  ready: Promise<{ ok: true } | { ok: false; error: unknown }>;
}

/** Parameters of {@link startHttp2Run}. */
export interface Http2RunParams {
  pool: TransportPool;
  baseUrl: string;
  headers: Record<string, string>;
  requestId: string;
  first: AgentClientMessage;
  signal: AbortSignal | undefined;
  logger: Logger;
  errorContext: ErrorMappingContext;
}

/** Error for sends after the run is over. */
export function streamClosedError(cause?: unknown): ProxyError {
  return new ProxyError("backend_protocol", "Cannot send: the Run stream has ended.", {
    detail: "stream_closed",
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Error used to abort a run without an explicit reason. */
export function abortedError(reason?: unknown): ProxyError {
  if (reason instanceof ProxyError) return reason;
  // AbortSignal.timeout() → timeout, an AbortError → canceled; any other reason is a plain cancel.
  const mapped = reason === undefined ? undefined : toProxyError(reason);
  if (mapped?.code === "timeout" || mapped?.code === "canceled") return mapped;
  return new ProxyError("canceled", "The Run was aborted.", {
    detail: "canceled",
    ...(reason === undefined ? {} : { cause: reason }),
  });
}

/** Links a caller's AbortSignal to `abort`; returns the unlink function. */
export function linkSignal(signal: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (signal === undefined) return () => {};
  if (signal.aborted) {
    abort(signal.reason);
    return () => {};
  }
  const listener = () => abort(signal.reason);
  signal.addEventListener("abort", listener, { once: true });
  return () => signal.removeEventListener("abort", listener);
}

/** Starts `Run` over HTTP/2 with `first` as the first request frame. */
export function startHttp2Run(params: Http2RunParams): StartedRun {
  const controller = new AbortController();
  const queue = createAsyncQueue<AgentClientMessage>();
  let responded = false;
  let markResponded: () => void = () => {};
  const respondedPromise = new Promise<void>((resolve) => (markResponded = resolve));
  let bytesSent = 0;
  const transport = params.pool.http2(
    params.baseUrl,
    () => {
      responded = true;
      markResponded();
    },
    // Counted from what connect-es serialized, so each message is encoded once (§4.2 frames are Connect envelopes).
    (payloadBytes) => (bytesSent += payloadBytes),
  );
  const client = createClient(AgentService, transport);
  const iterator = client.run(queue, { headers: params.headers, signal: controller.signal })[Symbol.asyncIterator]();
  const firstNext = iterator.next();
  // Observed by messages(); a run aborted before anyone iterates must not raise an unhandled rejection.
  firstNext.catch(() => {});

  let consumed = false;
  let finished = false;
  let endError: ProxyError | undefined;
  const finish = (error?: ProxyError) => {
    if (finished) return;
    finished = true;
    endError = error;
    unlink();
    // Also after a clean end: connect no longer pulls request messages, so queued sends must reject, not hang.
    queue.fail(error ?? streamClosedError());
  };
  const abort = (reason?: unknown) => {
    if (finished) return;
    const error = abortedError(reason);
    finish(error);
    controller.abort(error);
  };
  const unlink = linkSignal(params.signal, abort);

  const stream: RunStream = {
    transport: "http2",
    requestId: params.requestId,
    get bytesSent() {
      return bytesSent;
    },
    async send(message) {
      if (finished || queue.closed) throw endError ?? streamClosedError();
      try {
        await queue.push(message);
      } catch (error) {
        throw toProxyError(error, params.errorContext);
      }
    },
    messages() {
      if (consumed) throw new ProxyError("internal", "RunStream.messages() has a single consumer.");
      consumed = true;
      return (async function* () {
        let clean = false;
        try {
          let result = await firstNext;
          while (result.done !== true) {
            yield result.value;
            result = await iterator.next();
          }
          clean = true;
        } catch (error) {
          const mapped = controller.signal.aborted
            ? abortedError(controller.signal.reason)
            : toProxyError(error, params.errorContext);
          params.logger.debug("Run stream failed", {
            requestId: params.requestId,
            code: mapped.code,
            detail: mapped.detail,
          });
          finish(mapped);
          throw mapped;
        } finally {
          if (clean) finish();
          else {
            // Error or early exit: release the HTTP/2 stream too (a no-op when connect already closed it).
            finish(abortedError());
            controller.abort(abortedError());
          }
        }
      })();
    },
    closeSend() {
      queue.close();
    },
    abort,
  };

  stream.send(params.first).catch(() => {});
  const ready = Promise.race([
    respondedPromise.then(() => ({ ok: true }) as const),
    firstNext.then(
      () => ({ ok: true }) as const,
      (error: unknown) => (responded ? ({ ok: true } as const) : ({ ok: false, error } as const)),
    ),
  ]);
  return { stream, ready };
}
