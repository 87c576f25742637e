/**
 * Connect errors for the hand-framed streaming calls (HTTP/2 `Run`, HTTP/1.1 `RunSSE`): an end-of-stream error, a
 * non-200 answer and an HTTP/2 reset become the ConnectError connect-es itself would raise, so error-mapping.ts
 * classifies them exactly like any other call (by Code and ErrorDetails, never by text).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { codeFromHttpStatus, errorFromJson } from "@connectrpc/connect/protocol-connect";
import type { EndStreamError } from "./envelope.js";

/** A Connect end-of-stream error as a ConnectError (details stay decodable by findDetails). */
export function endStreamToConnectError(
  error: EndStreamError,
  metadata: Record<string, string[]>,
  responseHeaders?: Headers,
): ConnectError {
  const headers = new Headers();
  for (const [key, values] of Object.entries(metadata)) for (const value of values) headers.append(key, value);
  // connect-es adds the response headers to an end-of-stream error's metadata (`retry-after` may be either).
  responseHeaders?.forEach((value, key) => {
    headers.append(key, value);
  });
  const fallback = new ConnectError(error.message, Code.Unknown, headers);
  try {
    return errorFromJson({ code: error.code, message: error.message, details: error.details }, headers, fallback);
  } catch {
    return fallback;
  }
}

/** A streaming answer with a status other than 200: the code the status implies (Connect §HTTP-to-error-code). */
export function httpStatusError(status: number, headers: Headers): ConnectError {
  return new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), headers);
}

/**
 * The Connect code of an HTTP/2 RST_STREAM error code (the gRPC HTTP/2 mapping); undefined for NO_ERROR and
 * STREAM_CLOSED, which say nothing about the call.
 */
function codeOfRst(rstCode: number): Code | undefined {
  switch (rstCode) {
    case 0x1: // PROTOCOL_ERROR
    case 0x2: // INTERNAL_ERROR
    case 0x3: // FLOW_CONTROL_ERROR
    case 0x4: // SETTINGS_TIMEOUT
    case 0x6: // FRAME_SIZE_ERROR
    case 0x9: // COMPRESSION_ERROR
    case 0xa: // CONNECT_ERROR
      return Code.Internal;
    case 0x7: // REFUSED_STREAM
      return Code.Unavailable;
    case 0x8: // CANCEL
      return Code.Canceled;
    case 0xb: // ENHANCE_YOUR_CALM
      return Code.ResourceExhausted;
    case 0xc: // INADEQUATE_SECURITY
    case 0xd: // HTTP_1_1_REQUIRED
      return Code.PermissionDenied;
    default:
      return undefined;
  }
}

/** The error of a stream the peer reset with `rstCode`, or undefined when the code carries no error. */
export function rstStreamError(rstCode: number): ConnectError | undefined {
  const code = codeOfRst(rstCode);
  if (code === undefined) return undefined;
  return new ConnectError(`HTTP/2 stream closed with error code 0x${rstCode.toString(16)}`, code);
}

/** A Node transport error (stream or session) as a ConnectError with the Node error as its cause. */
export function transportError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new ConnectError(message, Code.Internal, undefined, undefined, error);
}
