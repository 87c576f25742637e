/**
 * HTTP/1.1 "BidiSse" transport (docs/protocol.md §4.3): `POST /agent.v1.AgentService/RunSSE` carries one
 * `BidiRequestId` envelope and streams enveloped `AgentServerMessage` frames back; every client message is a unary
 * `aiserver.v1.BidiService/BidiAppend` with lower-case hex `data`, the same `request_id` and `append_seqno` 0,1,2…
 * The response body is read with the project's one envelope reader (envelope.ts).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { type ConnectError, createClient } from "@connectrpc/connect";
import { errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import type { AgentClientMessage, AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import { BidiRequestIdSchema, BidiService } from "../../gen/aiserver/v1/bidi_pb.js";
import { ProxyError } from "../../util/errors.js";
import type { Logger } from "../../util/logger.js";
import { endStreamToConnectError, httpStatusError } from "../connect/connect-errors.js";
import {
  createEnvelopeReader,
  EnvelopeError,
  encodeEnvelope,
  FLAG_END_STREAM,
  FLAG_TRAILER,
  parseEndStream,
} from "../connect/envelope.js";
import { fetchOrUnavailable, type TransportPool } from "../connect/transports.js";
import { type ErrorMappingContext, toProxyError } from "./error-mapping.js";
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

/** Parameters of {@link startSseRun}. */
export interface SseRunParams {
  pool: TransportPool;
  fetch: typeof fetch;
  baseUrl: string;
  /** Builds the §2.1 headers (with `x-cursor-streaming`) with a fresh token for each call of the session. */
  headers: (signal: AbortSignal) => Promise<Record<string, string>>;
  requestId: string;
  first: AgentClientMessage;
  logger: Logger;
  errorContext: ErrorMappingContext;
  maxMessageBytes: number;
}

/** Bytes of a BidiAppend request besides its hex `data` (request id, seqno, framing), with room to spare. */
const APPEND_OVERHEAD_BYTES = 4096;

/** The largest client message one BidiAppend carries: hex doubles it inside the transport's message limit. */
export function appendPayloadLimit(maxMessageBytes: number): number {
  return Math.floor((maxMessageBytes - APPEND_OVERHEAD_BYTES) / 2);
}

const toHex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/** A non-200 RunSSE answer: the Connect JSON error body when there is one, else the HTTP status mapping. */
async function httpErrorOf(response: Response): Promise<ConnectError> {
  const fallback = httpStatusError(response.status, response.headers);
  try {
    return errorFromJsonBytes(new Uint8Array(await response.arrayBuffer()), response.headers, fallback);
  } catch {
    return fallback;
  }
}

async function* readServerMessages(response: Response, maxMessageBytes: number): AsyncGenerator<AgentServerMessage> {
  if (response.status !== 200) throw await httpErrorOf(response);
  if (response.body === null) throw new EnvelopeError("RunSSE answered without a body.");
  const reader = createEnvelopeReader({ maxMessageBytes });
  const body = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await body.read();
      if (done) break;
      for (const frame of reader.push(value)) {
        if ((frame.flags & FLAG_END_STREAM) !== 0) {
          const end = parseEndStream(frame.data);
          if (end.error !== undefined) throw endStreamToConnectError(end.error, end.metadata);
          return;
        }
        if ((frame.flags & FLAG_TRAILER) !== 0) throw new EnvelopeError("Unexpected gRPC-Web trailer on RunSSE.");
        yield decodeServerMessage(frame.data, "RunSSE");
      }
    }
    reader.end();
    // A body that stops without the end-of-stream frame is a dropped connection, not a clean end (§4.2 retry rule).
    throw new ProxyError("backend_unavailable", "RunSSE ended without an end-of-stream frame.", {
      retryable: true,
      detail: "missing_end_stream",
    });
  } finally {
    body.cancel().catch(() => {});
  }
}

/** Starts RunSSE and, concurrently (as RAPH does, §4.3 step 4), the first BidiAppend carrying `first`. */
export function startSseRun(params: SseRunParams): StartedRun {
  // What the run's closures use, taken out of `params` (no closure names it, so their shared context does not hold
  // it): the run lives as long as its turn, minutes when parked, and `params` holds the first message (the whole run
  // request). The caller's signal and the open's deadline are openRun's (run-opening.ts): it aborts the run.
  const { fetch: fetchFn, baseUrl, headers: headersFor, requestId, logger, errorContext, maxMessageBytes } = params;
  const controller = new AbortController();
  const maxPayloadBytes = appendPayloadLimit(maxMessageBytes);
  const bidi = createClient(BidiService, params.pool.http1(baseUrl));
  let bytesSent = 0;
  let nextSeqno = 0;
  let chain: Promise<void> = Promise.resolve();
  let failure: ProxyError | undefined;
  let finished = false;
  /** The server ended the Run cleanly: appends still in flight or queued then are moot, not failures. */
  let endedCleanly = false;
  let consumed = false;

  const fail = (error: ProxyError) => {
    failure ??= error;
    finished = true;
    controller.abort(failure);
  };
  const abort = (reason?: unknown) => {
    if (!finished) fail(abortedError(reason));
  };

  const append = async (bytes: Uint8Array, seqno: number): Promise<void> => {
    if (endedCleanly) return;
    if (failure !== undefined) throw failure;
    try {
      const headers = await headersFor(controller.signal);
      const request = { data: toHex(bytes), requestId: { requestId }, appendSeqno: BigInt(seqno) };
      await bidi.bidiAppend(request, { headers, signal: controller.signal });
      bytesSent += bytes.length;
    } catch (error) {
      // The server finished the turn while this append was on its way (e.g. the stream_close after the last tool
      // result, which it did not wait for): nothing is lost, so the send succeeds as far as the caller can tell.
      if (endedCleanly) return;
      const mapped = failure ?? toProxyError(error, errorContext);
      // A lost append leaves a gap in the seqnos: the whole run is broken, so fail it (messages() throws too).
      fail(mapped);
      throw mapped;
    }
  };

  const send = (message: AgentClientMessage): Promise<void> => {
    if (finished) return Promise.reject(failure ?? streamClosedError());
    const bytes = encodeClientMessage(message);
    if (bytes.length > maxPayloadBytes) {
      // Cannot be appended at all: a gap in the seqnos would break the run anyway, so it ends with the 413.
      const error = messageTooLargeError(bytes.length, maxPayloadBytes, "HTTP/1.1");
      fail(error);
      return Promise.reject(error);
    }
    const seqno = nextSeqno++;
    const sent = chain.then(() => append(bytes, seqno));
    chain = sent.catch(() => {});
    return sent;
  };

  const opening = (async () => {
    const headers = { ...(await headersFor(controller.signal)), ...connectStreamHeaders() };
    const request = create(BidiRequestIdSchema, { requestId });
    // encodeEnvelope allocates a fresh ArrayBuffer-backed array, which is what fetch's BodyInit wants.
    const body = encodeEnvelope(0, toBinary(BidiRequestIdSchema, request)) as Uint8Array<ArrayBuffer>;
    return fetchOrUnavailable(fetchFn, new URL("agent.v1.AgentService/RunSSE", withSlash(baseUrl)), {
      method: "POST",
      headers,
      body,
      signal: controller.signal,
    });
  })();
  opening.catch(() => {});
  send(params.first).catch(() => {});

  const stream: RunStream = {
    transport: "http1",
    requestId,
    get bytesSent() {
      return bytesSent;
    },
    send,
    messages() {
      if (consumed) throw new ProxyError("internal", "RunStream.messages() has a single consumer.");
      consumed = true;
      return (async function* () {
        let clean = false;
        try {
          yield* readServerMessages(await opening, maxMessageBytes);
          clean = true;
        } catch (error) {
          const mapped = failure ?? toProxyError(error, errorContext);
          logger.debug("RunSSE stream failed", { requestId, code: mapped.code });
          fail(mapped);
          throw mapped;
        } finally {
          if (clean) {
            finished = true;
            endedCleanly = true;
            // The turn is over: in-flight appends are moot; release their sockets.
            controller.abort(streamClosedError());
          } else abort();
        }
      })();
    },
    closeSend() {},
    abort,
  };

  const ready = opening.then(
    () => ({ ok: true }) as const,
    (error: unknown) => ({ ok: false, error: failure ?? error }) as const,
  );
  return { stream, ready };
}

function withSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
