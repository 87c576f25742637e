/**
 * The HTTP/2 `Run` (docs/protocol.md §4.2) straight on a `node:http2` stream: Connect streaming framing by hand
 * (envelope.ts), server messages decoded with `fromBinary` in the stream's data events into a small pull queue, client
 * messages encoded with `toBinary` and written as they are sent. No async-generator chain between the socket and the
 * reader: one promise per message read, none per message written unless the stream pushes back.
 *
 * The session pool (http2-sessions.ts), the error classification (error-mapping.ts via connect-errors.ts) and the
 * connection-vs-stream failure distinction of the HTTP/1.1 fallback are the same as for the unary calls.
 */
import { type ClientHttp2Stream, constants, type Http2Session, type IncomingHttpHeaders } from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import type { AgentClientMessage, AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";
import { endStreamToConnectError, httpStatusError, rstStreamError, transportError } from "../connect/connect-errors.js";
import {
  createEnvelopeReader,
  EnvelopeError,
  type EnvelopeReader,
  encodeEnvelope,
  FLAG_END_STREAM,
  FLAG_TRAILER,
  parseEndStream,
} from "../connect/envelope.js";
import type { Http2Sessions } from "../connect/http2-sessions.js";
import type { TransportPool } from "../connect/transports.js";
import { type ErrorMappingContext, toProxyError } from "./error-mapping.js";
import { assertRunTransition, type RunPhase, runIsOver } from "./h2-run-phase.js";
import { connectStreamHeaders } from "./headers.js";
import {
  abortedError,
  decodeServerMessage,
  encodeClientMessage,
  messageTooLargeError,
  type RunStream,
  type StartedRun,
  streamClosedError,
} from "./run-stream.js";

/** Parameters of {@link startHttp2Run}. */
export interface Http2RunParams {
  pool: TransportPool;
  baseUrl: string;
  headers: Record<string, string>;
  requestId: string;
  first: AgentClientMessage;
  logger: Logger;
  errorContext: ErrorMappingContext;
  maxMessageBytes: number;
  /** On a connection of its own (closed with the run), not the pool's shared one. */
  freshConnection?: boolean;
}

/** Decoded messages waiting for the reader before the stream is paused (HTTP/2 flow control then holds the rest). */
const HIGH_WATER = 64;
/**
 * The user agent the connect-es client sent on this call before it was framed by hand (and still sends on the unary
 * calls): Cursor sees the same client either way.
 */
const USER_AGENT = "connect-es/2.1.2";
const DONE: IteratorResult<AgentServerMessage> = { done: true, value: undefined };
const RESPONDED = { ok: true } as const;

/** The last base URL's Run path: a server talks to one agent URL, and parsing it took about 10 µs of every Run. */
let lastRunPath: { baseUrl: string; path: string } | undefined;

/** `/agent.v1.AgentService/Run` under the base URL's path (a base URL may carry a prefix). */
function runPath(baseUrl: string): string {
  if (lastRunPath?.baseUrl === baseUrl) return lastRunPath.path;
  const prefix = new URL(baseUrl).pathname;
  const path = `${prefix.endsWith("/") ? prefix : `${prefix}/`}agent.v1.AgentService/Run`;
  lastRunPath = { baseUrl, path };
  return path;
}

function headersOf(node: IncomingHttpHeaders): Headers {
  return headersOfPairs(headerPairs(node));
}

/**
 * A response's headers (no pseudo-headers) as name, value, name, value…: what a Run keeps of them for an end-of-stream
 * error's metadata (connect-es adds them to it). Node's headers object is a dictionary several times that size, and
 * a parked turn keeps its Run's stream open for minutes.
 */
function headerPairs(node: IncomingHttpHeaders): string[] {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith(":") || value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) pairs.push(key, v);
    else pairs.push(key, String(value));
  }
  return pairs;
}

function headersOfPairs(pairs: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < pairs.length; i += 2) headers.append(pairs[i] as string, pairs[i + 1] as string);
  return headers;
}

/** A client message written before the stream opened, and the sender waiting on it. */
interface Queued {
  frame: Uint8Array;
  payloadBytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * One HTTP/2 Run. A class rather than closures: a parked turn keeps its stream open for minutes, and one object with
 * prototype methods holds less than a context and a closure per operation (heap per parked turn). The object is also
 * the iterator of {@link messages}.
 */
class Http2RunStream implements RunStream, AsyncIterator<AgentServerMessage>, AsyncIterable<AgentServerMessage> {
  readonly transport = "http2";
  readonly requestId: string;
  readonly ready: StartedRun["ready"];
  private sent = 0;
  /** See h2-run-phase.ts. */
  private phase: RunPhase = "opening";
  /** The caller half-closed the send side (written once the stream is open). */
  private sendClosed = false;
  private consumed = false;
  /** The inbox is full and the stream paused (HTTP/2 flow control holds the rest). */
  private paused = false;
  /** The failure that ended the run; undefined after a clean end or while it runs. */
  private endError: ProxyError | undefined;
  private h2: ClientHttp2Stream | undefined;
  private session: Http2Session | undefined;
  private reader: EnvelopeReader | undefined;
  /** The response's headers as {@link headerPairs}: only an end-of-stream error reads them. */
  private responseHeaders: string[] | undefined;
  /** Decoded server messages not yet read. */
  private inbox: AgentServerMessage[] = [];
  private waiter:
    | { resolve: (r: IteratorResult<AgentServerMessage>) => void; reject: (e: unknown) => void }
    | undefined;
  /** Sends made while `opening`. */
  private queued: Queued[] = [];
  /** Senders waiting for `drain`. */
  private drainWaiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> | undefined;
  private settleReady: ((outcome: Awaited<StartedRun["ready"]>) => void) | undefined;
  private readonly sessions: Http2Sessions;
  private readonly ownsSessions: boolean;
  private readonly logger: Logger;
  private readonly errorContext: ErrorMappingContext;
  private readonly maxMessageBytes: number;

  constructor(params: Http2RunParams) {
    this.requestId = params.requestId;
    this.logger = params.logger;
    this.errorContext = params.errorContext;
    this.maxMessageBytes = params.maxMessageBytes;
    this.ready = new Promise((resolve) => (this.settleReady = resolve));
    this.ownsSessions = params.freshConnection === true;
    this.sessions = this.ownsSessions
      ? params.pool.privateHttp2Sessions(params.baseUrl)
      : params.pool.http2Sessions(params.baseUrl);
    // Copied with Object.assign, not spread: keys added to a spread copy cost a fresh hidden class (every Run).
    const headers: Record<string, string> = Object.assign({}, params.headers, connectStreamHeaders());
    headers["user-agent"] = USER_AGENT;
    this.sessions.request("POST", runPath(params.baseUrl), headers, {}).then(
      (stream) => this.attach(stream),
      (error: unknown) => {
        this.fail(transportError(error), "unreachable");
        this.releaseOwnSessions();
      },
    );
  }

  get bytesSent(): number {
    return this.sent;
  }

  /**
   * After the call failed without a response: true when the HTTP/2 connection itself failed (it could not be opened,
   * or it died before the peer's SETTINGS arrived), which is what makes `auto` fall back to HTTP/1.1; false for a
   * stream-level failure on a working connection (RST_STREAM), which is the call's own error.
   */
  private connectionFailed(): boolean {
    return this.phase === "unreachable" || (this.session !== undefined && !this.sessions.handshaken(this.session));
  }

  send(message: AgentClientMessage): Promise<void> {
    if (runIsOver(this.phase) || this.sendClosed) return Promise.reject(this.endError ?? streamClosedError());
    const payload = encodeClientMessage(message);
    if (payload.length > this.maxMessageBytes) {
      return Promise.reject(messageTooLargeError(payload.length, this.maxMessageBytes, "HTTP/2"));
    }
    const frame = encodeEnvelope(0, payload);
    if (this.phase === "opening") {
      return new Promise<void>((resolve, reject) =>
        this.queued.push({ frame, payloadBytes: payload.length, resolve, reject }),
      );
    }
    return this.write(frame, payload.length);
  }

  messages(): AsyncIterable<AgentServerMessage> {
    if (this.consumed) throw new ProxyError("internal", "RunStream.messages() has a single consumer.");
    this.consumed = true;
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentServerMessage> {
    return this;
  }

  next(): Promise<IteratorResult<AgentServerMessage>> {
    const value = this.inbox.shift();
    if (value !== undefined) {
      if (this.paused && this.inbox.length === 0) {
        this.paused = false;
        this.h2?.resume();
      }
      return Promise.resolve({ done: false, value });
    }
    if (runIsOver(this.phase)) {
      return this.endError === undefined ? Promise.resolve(DONE) : Promise.reject(this.endError);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The reader left the loop early: that aborts the run. */
  return(): Promise<IteratorResult<AgentServerMessage>> {
    this.abort();
    return Promise.resolve(DONE);
  }

  closeSend(): void {
    if (this.sendClosed) return;
    this.sendClosed = true;
    // While opening, the queued frames are written first, then the half-close (see attach).
    if (this.phase !== "opening" && this.h2 !== undefined && !this.h2.writableEnded) this.h2.end();
  }

  abort(reason?: unknown): void {
    if (runIsOver(this.phase)) return;
    this.inbox = [];
    this.finish(abortedError(reason));
  }

  private write(frame: Uint8Array, payloadBytes: number): Promise<void> {
    const h2 = this.h2 as ClientHttp2Stream;
    this.sent += payloadBytes;
    if (h2.write(frame)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      if (this.drainWaiters === undefined) {
        this.drainWaiters = [];
        h2.once("drain", () => this.drained());
      }
      this.drainWaiters.push({ resolve, reject });
    });
  }

  private drained(): void {
    const waiters = this.drainWaiters ?? [];
    this.drainWaiters = undefined;
    for (const w of waiters) w.resolve();
  }

  private attach(h2: ClientHttp2Stream): void {
    if (runIsOver(this.phase)) {
      // Aborted while the stream was opening. A connection of the run's own goes with its stream.
      h2.on("close", () => this.releaseOwnSessions());
      h2.on("error", () => {});
      h2.close(constants.NGHTTP2_CANCEL);
      return;
    }
    this.phase = assertRunTransition(this.phase, "requested");
    this.h2 = h2;
    this.session = h2.session;
    h2.on("response", (headers) => this.onResponse(headers));
    h2.on("data", (chunk: Buffer) => this.onData(chunk));
    h2.on("end", () => this.onEnd());
    h2.on("error", (error) => this.fail(transportError(error)));
    h2.on("close", () => this.onClose());
    const queued = this.queued;
    this.queued = [];
    for (const q of queued) this.write(q.frame, q.payloadBytes).then(q.resolve, q.reject);
    if (this.sendClosed) h2.end();
  }

  private onResponse(headers: IncomingHttpHeaders): void {
    // Headers that arrive after an abort are moot.
    if (runIsOver(this.phase)) return;
    this.markResponded();
    const status = Number(headers[":status"] ?? 0);
    if (status !== 200) {
      this.fail(httpStatusError(status, headersOf(headers)));
      return;
    }
    const type = headers["content-type"];
    if (type?.toLowerCase() !== "application/connect+proto") {
      const code = type === undefined ? Code.Unknown : Code.Internal;
      this.fail(new ConnectError(`unsupported content type ${type}`, code, headersOf(headers)));
      return;
    }
    const encoding = headers["connect-content-encoding"];
    if (encoding !== undefined && String(encoding).toLowerCase() !== "identity") {
      this.fail(new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, headersOf(headers)));
      return;
    }
    this.responseHeaders = headerPairs(headers);
    this.reader = createEnvelopeReader({ maxMessageBytes: this.maxMessageBytes });
  }

  private onData(chunk: Buffer): void {
    if (runIsOver(this.phase)) return;
    try {
      const reader = this.reader;
      if (reader === undefined) throw new EnvelopeError("Run sent data before a valid response.");
      for (const frame of reader.push(chunk)) {
        if ((frame.flags & FLAG_END_STREAM) !== 0) {
          this.onEndStream(frame.data);
          return;
        }
        if ((frame.flags & FLAG_TRAILER) !== 0) throw new EnvelopeError("Unexpected gRPC-Web trailer on Run.");
        this.deliver(decodeServerMessage(frame.data, "Run"));
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private deliver(message: AgentServerMessage): void {
    const w = this.waiter;
    if (w !== undefined) {
      this.waiter = undefined;
      w.resolve({ done: false, value: message });
      return;
    }
    this.inbox.push(message);
    if (!this.paused && this.inbox.length >= HIGH_WATER) {
      this.paused = true;
      this.h2?.pause();
    }
  }

  private onEndStream(data: Uint8Array): void {
    const end = parseEndStream(data);
    if (end.error !== undefined) {
      const headers = this.responseHeaders === undefined ? undefined : headersOfPairs(this.responseHeaders);
      this.fail(endStreamToConnectError(end.error, end.metadata, headers));
      return;
    }
    this.finish();
  }

  /** The response body ended; after a clean end-of-stream frame the run is already over. */
  private onEnd(): void {
    if (runIsOver(this.phase)) return;
    // A body that stops without the end-of-stream frame is a dropped connection, not a clean end (§4.2 retry rule).
    this.fail(
      new ProxyError("backend_unavailable", "Run ended without an end-of-stream frame.", {
        retryable: true,
        detail: "missing_end_stream",
      }),
    );
  }

  private releaseOwnSessions(): void {
    if (this.ownsSessions) this.sessions.close();
  }

  /** The stream closed (once): a connection of the run's own goes with it (one listener, no once-wrapper kept). */
  private onClose(): void {
    this.releaseOwnSessions();
    if (runIsOver(this.phase)) return;
    const h2 = this.h2 as ClientHttp2Stream;
    const reset = rstStreamError(h2.rstCode);
    if (reset !== undefined) {
      this.fail(reset);
      return;
    }
    // Closed without an error code before the body ended: the connection went away under the stream.
    const premature = Object.assign(new Error("The Run stream closed before it ended."), {
      code: "ERR_STREAM_PREMATURE_CLOSE",
    });
    this.fail(transportError(premature));
  }

  /**
   * The answer came: `ready` settles in the check phase, not as a promise job of the `response` event. Node runs an
   * event's promise jobs before its next read callback, and Cursor's first message (request_context_args, which it
   * waits on before the first token) mostly comes in the same read as its answer: a reader already waiting (the
   * turn's session starts once the request has left, OpenRunOptions `onRequestSent`) then answers it before the open
   * settles through its callers' frames (about 75 µs), not after.
   */
  private markResponded(): void {
    this.phase = assertRunTransition(this.phase, "responded");
    const settle = this.settleReady;
    this.settleReady = undefined;
    if (settle !== undefined) setImmediate(settle, RESPONDED);
  }

  /**
   * Ends the run with `error` (mapped to a ProxyError), unless it already ended; `unreachable` when no stream could
   * be opened at all.
   */
  private fail(error: unknown, to: "failed" | "unreachable" = "failed"): void {
    if (runIsOver(this.phase)) return;
    const mapped = toProxyError(error, this.errorContext);
    this.logger.debug("Run stream failed", { requestId: this.requestId, code: mapped.code, detail: mapped.detail });
    this.finish(mapped, to);
  }

  /**
   * Ends the run: clean (`error` undefined) after the end-of-stream frame, else failed or aborted. Wakes the reader,
   * rejects waiting senders and releases the HTTP/2 stream (a half-close after a clean end, a reset otherwise).
   */
  private finish(error?: ProxyError, to: "failed" | "unreachable" = "failed"): void {
    if (runIsOver(this.phase)) return;
    const responded = this.phase === "responded";
    this.phase = assertRunTransition(this.phase, error === undefined ? "ended" : to);
    this.endError = error;
    this.reader = undefined;
    this.responseHeaders = undefined;
    if (!responded) {
      const outcome = error ?? streamClosedError();
      this.settleReady?.({ ok: false, error: outcome, connectionFailed: this.connectionFailed() });
      this.settleReady = undefined;
    }
    const w = this.waiter;
    this.waiter = undefined;
    if (w !== undefined) {
      if (error === undefined) w.resolve(DONE);
      else w.reject(error);
    }
    // Sends still on their way when the server ended the Run cleanly are moot, not failures (as on HTTP/1.1: the
    // server may end a turn on the last tool result without waiting for what follows it); otherwise they fail.
    const settle = (sender: { resolve: () => void; reject: (e: unknown) => void }) =>
      error === undefined ? sender.resolve() : sender.reject(error);
    for (const q of this.queued) settle(q);
    this.queued = [];
    for (const d of this.drainWaiters ?? []) settle(d);
    this.drainWaiters = undefined;
    const h2 = this.h2;
    if (h2 === undefined || h2.closed || h2.destroyed) return;
    if (error === undefined) {
      if (!h2.writableEnded) h2.end();
      // Nothing more will be read: let the peer's end (or anything after it) drain without buffering.
      if (this.paused) h2.resume();
    } else h2.close(constants.NGHTTP2_CANCEL);
  }
}

/** Starts `Run` over HTTP/2 with `first` as the first request frame. */
export function startHttp2Run(params: Http2RunParams): StartedRun {
  const stream = new Http2RunStream(params);
  // A first message that cannot be sent (too large, or the stream failed first) ends the run with that error; the
  // server would otherwise wait for a run_request that never comes.
  stream.send(params.first).catch((error: unknown) => stream.abort(error));
  return { stream, ready: stream.ready };
}
