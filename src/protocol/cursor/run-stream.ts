/**
 * One open `agent.v1.AgentService/Run` conversation turn, whatever the transport (docs/protocol.md §4.2, §4.3), and
 * what its implementations share. HTTP/2: h2-run.ts; HTTP/1.1 RunSSE + BidiAppend: sse-run.ts.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../../gen/agent/v1/agent_pb.js";
import { ProxyError } from "../../util/errors.js";
import { EnvelopeError } from "../connect/envelope.js";
import { toProxyError } from "./error-mapping.js";
import { decodeNativeToolMessage } from "./native-tool-decode.js";
import { decodeStreamingMessage } from "./streaming-decode.js";
import { encodeStreamingMessage } from "./streaming-encode.js";
import { decodeToolMessage } from "./tool-decode.js";
import { decodeTurnMessage } from "./turn-decode.js";

/** One open Run, over HTTP/2 (`Run`) or HTTP/1.1 (`RunSSE` + `BidiAppend`). */
export interface RunStream {
  readonly transport: "http2" | "http1";
  readonly requestId: string;
  /**
   * Sends one client message. h2: a frame on the bidi stream; h1: one BidiAppend (hex `data`, `request_id`,
   * `append_seqno` 0,1,2…). Sends are serialised in call order, so seqnos never reorder. Rejects with a ProxyError
   * once the stream has failed, ended or been aborted; a send still on its way when the server ends the Run cleanly
   * resolves (the server may finish a turn without waiting for it, so it is moot, not a failure).
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

/** Error for sends after the run is over. */
export function streamClosedError(cause?: unknown): ProxyError {
  return new ProxyError("backend_protocol", "Cannot send: the Run stream has ended.", {
    detail: "stream_closed",
    ...(cause === undefined ? {} : { cause }),
  });
}

const MIB = 1024 * 1024;

/**
 * A client message that does not fit in one message of the transport (HTTP/2: the message limit; HTTP/1.1: half of
 * it, BidiAppend carries the bytes hex-encoded). A size problem, answered 413 at once, never a usage limit or a wait.
 */
export function messageTooLargeError(bytes: number, limit: number, transport: "HTTP/2" | "HTTP/1.1"): ProxyError {
  const mib = (n: number) => (n / MIB).toFixed(1);
  return new ProxyError(
    "request_too_large",
    `The request is ${mib(bytes)} MiB once encoded for Cursor, over the ${mib(limit)} MiB one message may carry over ${transport}. Send smaller or fewer images.`,
    { detail: "message_too_large", status: 413, retryable: false },
  );
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

/**
 * Decodes one server frame's payload; `method` names the call in the error (`Run`, `RunSSE`). Text and token deltas
 * and heartbeats, the other messages of a plain turn, those of a client tool call and those of Cursor's own tools take
 * reflection-free paths with the same result (streaming-decode.ts, turn-decode.ts, tool-decode.ts,
 * native-tool-decode.ts).
 */
export function decodeServerMessage(data: Uint8Array, method: string): AgentServerMessage {
  try {
    return (
      decodeStreamingMessage(data) ??
      decodeTurnMessage(data) ??
      decodeToolMessage(data) ??
      decodeNativeToolMessage(data) ??
      fromBinary(AgentServerMessageSchema, data)
    );
  } catch (error) {
    throw new EnvelopeError(`${method} frame is not a valid agent.v1.AgentServerMessage.`, error);
  }
}

/** Encodes one client message: the frequent tiny layouts without reflection (streaming-encode.ts), the rest with `toBinary`. */
export function encodeClientMessage(message: AgentClientMessage): Uint8Array {
  return encodeStreamingMessage(message) ?? toBinary(AgentClientMessageSchema, message);
}
