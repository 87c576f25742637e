/**
 * One open `agent.v1.AgentService/Run` conversation turn, whatever the transport (docs/protocol.md §4.2, §4.3),
 * and its HTTP/2 implementation: a connect-es bidi call whose request side is an {@link AsyncQueue}, so connect-node
 * does the framing.
 */
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
  /**
   * `ok: true` once the server answered (any answer); `ok: false` when the call failed before any response, with
   * `connectionFailed` when the HTTP/2 connection itself failed rather than this one stream (see Http2Call).
   */
  ready: Promise<{ ok: true } | { ok: false; error: unknown; connectionFailed?: boolean }>;
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

/**
 * The HTTP/2 RunStream. A class rather than closures over the start parameters: a parked turn keeps its stream open
 * for minutes, and one object with prototype methods holds far less than a context, a closure per operation and the
 * run request those closures could reach (heap per parked turn).
 */
class Http2RunStream implements RunStream {
  readonly transport = "http2";
  readonly requestId: string;
  /** Set once the transport produced an HTTP response (any status). */
  responded = false;
  private sent = 0;
  private consumed = false;
  private finished = false;
  private endError: ProxyError | undefined;
  private iterator: AsyncIterator<AgentServerMessage> | undefined;
  /** The first `next()`, started at once so the call opens now; dropped once read. */
  private firstNext: Promise<IteratorResult<AgentServerMessage>> | undefined;
  private readonly controller = new AbortController();
  private readonly queue = createAsyncQueue<AgentClientMessage>();
  private readonly signal: AbortSignal | undefined;
  private readonly logger: Logger;
  private readonly errorContext: ErrorMappingContext;
  /** Resolves when the transport produced an HTTP response. */
  readonly respondedPromise: Promise<void>;
  /** See Http2Call.connectionFailed. */
  readonly connectionFailed: () => boolean;

  constructor(params: Http2RunParams) {
    this.requestId = params.requestId;
    this.signal = params.signal;
    this.logger = params.logger;
    this.errorContext = params.errorContext;
    let markResponded: () => void = () => {};
    this.respondedPromise = new Promise<void>((resolve) => (markResponded = resolve));
    const call = params.pool.http2(
      params.baseUrl,
      () => {
        this.responded = true;
        markResponded();
      },
      // Counted from what connect-es serialized, so each message is encoded once (§4.2 frames are Connect envelopes).
      (payloadBytes) => {
        this.sent += payloadBytes;
      },
    );
    this.connectionFailed = call.connectionFailed;
    // The transport directly, not a promise client: the client's wrapper would add one more pending async generator
    // per open run; errors and the start of the call are the same.
    const response = call.transport.stream(
      AgentService.method.run,
      this.controller.signal,
      undefined,
      params.headers,
      this.queue,
      undefined,
    );
    this.firstNext = response.then((res) => {
      this.iterator = res.message[Symbol.asyncIterator]();
      return this.iterator.next();
    });
    // Observed by messages(); a run aborted before anyone iterates must not raise an unhandled rejection.
    this.firstNext.catch(() => {});
    if (this.signal?.aborted === true) this.abort(this.signal.reason);
    else this.signal?.addEventListener("abort", this, { once: true });
  }

  get bytesSent(): number {
    return this.sent;
  }

  /** The first server message (or the failure before it). */
  get first(): Promise<IteratorResult<AgentServerMessage>> {
    return this.firstNext ?? Promise.reject(new ProxyError("internal", "The first message was already read."));
  }

  async send(message: AgentClientMessage): Promise<void> {
    if (this.finished || this.queue.closed) throw this.endError ?? streamClosedError();
    try {
      await this.queue.push(message);
    } catch (error) {
      throw toProxyError(error, this.errorContext);
    }
  }

  messages(): AsyncIterable<AgentServerMessage> {
    if (this.consumed) throw new ProxyError("internal", "RunStream.messages() has a single consumer.");
    this.consumed = true;
    return this.read();
  }

  closeSend(): void {
    this.queue.close();
  }

  abort(reason?: unknown): void {
    if (this.finished) return;
    const error = abortedError(reason);
    this.finish(error);
    this.controller.abort(error);
  }

  /** The caller's signal aborted (EventListener object: no closure per run). */
  handleEvent(): void {
    this.abort(this.signal?.reason);
  }

  private async *read(): AsyncGenerator<AgentServerMessage> {
    let clean = false;
    try {
      let result = await (this.firstNext as Promise<IteratorResult<AgentServerMessage>>);
      // Consumed: the first server message need not live as long as the run.
      this.firstNext = undefined;
      while (result.done !== true) {
        yield result.value;
        result = await (this.iterator as AsyncIterator<AgentServerMessage>).next();
      }
      clean = true;
    } catch (error) {
      const mapped = this.controller.signal.aborted
        ? abortedError(this.controller.signal.reason)
        : toProxyError(error, this.errorContext);
      this.logger.debug("Run stream failed", { requestId: this.requestId, code: mapped.code, detail: mapped.detail });
      this.finish(mapped);
      throw mapped;
    } finally {
      if (clean) this.finish();
      else {
        // Error or early exit: release the HTTP/2 stream too (a no-op when connect already closed it).
        this.finish(abortedError());
        this.controller.abort(abortedError());
      }
    }
  }

  private finish(error?: ProxyError): void {
    if (this.finished) return;
    this.finished = true;
    this.endError = error;
    this.signal?.removeEventListener("abort", this);
    // Also after a clean end: connect no longer pulls request messages, so queued sends must reject, not hang.
    this.queue.fail(error ?? streamClosedError());
  }
}

/** Starts `Run` over HTTP/2 with `first` as the first request frame. */
export function startHttp2Run(params: Http2RunParams): StartedRun {
  const stream = new Http2RunStream(params);
  stream.send(params.first).catch(() => {});
  const ready = Promise.race([
    stream.respondedPromise.then(() => ({ ok: true }) as const),
    stream.first.then(
      () => ({ ok: true }) as const,
      (error: unknown) =>
        stream.responded
          ? ({ ok: true } as const)
          : ({ ok: false, error, connectionFailed: stream.connectionFailed() } as const),
    ),
  ]);
  return { stream, ready };
}
