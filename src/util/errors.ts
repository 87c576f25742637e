/**
 * The one error type that crosses layers. Inbound edges (protocol/) map upstream failures into it by code;
 * outbound edges (openai/, cli/) turn it into an HTTP body or an exit code. Never classify by message text.
 */

/** Closed set of error codes used everywhere inside cursor-bridge. */
export type ProxyErrorCode =
  | "invalid_request"
  | "request_too_large"
  | "unsupported_media_type"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "rate_limited"
  | "quota_exceeded"
  | "key_budget_exceeded"
  | "context_length_exceeded"
  | "backend_unavailable"
  | "backend_protocol"
  | "timeout"
  | "canceled"
  | "internal";

/** Node/undici transport error codes that mean the connection to Cursor failed or dropped. */
export type NetworkErrorCode =
  | "ECONNREFUSED"
  | "ECONNRESET"
  | "ECONNABORTED"
  | "EPIPE"
  | "ETIMEDOUT"
  | "ENOTFOUND"
  | "EAI_AGAIN"
  | "EHOSTUNREACH"
  | "ENETUNREACH"
  | "ENETDOWN"
  | "ERR_STREAM_PREMATURE_CLOSE"
  | "ERR_STREAM_WRITE_AFTER_END"
  | "ERR_STREAM_DESTROYED"
  | "UND_ERR_SOCKET"
  | "UND_ERR_CONNECT_TIMEOUT"
  | "UND_ERR_HEADERS_TIMEOUT"
  | "UND_ERR_BODY_TIMEOUT"
  | "UND_ERR_CLOSED"
  | `ERR_HTTP2_${string}`
  | `NGHTTP2_${string}`;

/**
 * The closed set of `detail` reasons, per code. Code that branches on a reason compares against these literals, so
 * a typo or a reason that no longer exists is a type error instead of a branch that silently never runs.
 */
export interface ProxyErrorDetails {
  invalid_request:
    | "invalid_config"
    | "unsafe_binding"
    | "invalid_field"
    | "nesting_too_deep"
    | "bad_request"
    | "file_unsupported"
    | "image_too_large"
    | "file_too_long"
    | "invalid_argument"
    | "already_exists"
    | "failed_precondition"
    | "out_of_range"
    | "turn_in_progress"
    | "previous_response_not_found"
    | "unsupported_model_parameter";
  request_too_large: "body_too_large" | "message_too_large";
  /** `encoded_body`: a `Content-Encoding` other than identity (the body is compressed). */
  unsupported_media_type: "not_json" | "encoded_body";
  unauthenticated:
    | "local_api_key"
    | "unauthenticated"
    | "token_expired"
    | "not_logged_in"
    | "refresh_failed"
    | "refresh_unavailable"
    | "credentials_rejected"
    | "invalid_credentials_file";
  permission_denied:
    | "permission_denied"
    | "host_not_allowed"
    | "origin_not_allowed"
    | "model_blocked"
    | "account_blocked"
    | "account_unknown"
    /** The account's plan cannot use the model (region, max mode, tier): another model may work. */
    | "model_not_available";
  not_found: "model_not_found" | "not_found" | "route_not_found" | "turn_expired";
  /** `key_*`: a virtual key's own limit (the team gateway's rpm / tpm / max-parallel), not Cursor's. */
  rate_limited: "rate_limit" | "key_rpm" | "key_tpm" | "key_parallel";
  /**
   * Cursor's plan limit. `resource_exhausted`: Cursor's bare `resource_exhausted` "Error" with no details, which is
   * a context overflow or a model the plan cannot use as often as a usage limit; the backend decides which once it
   * knows the request.
   */
  quota_exceeded: "usage_limit" | "resource_exhausted";
  /**
   * A virtual key's budget for the period (the team gateway), never Cursor's plan limit: `spent` = used up, `held`
   * = what is left is held by the key's requests running now.
   */
  key_budget_exceeded: "spent" | "held";
  /** `context_overflow`: a bare `resource_exhausted` on a request of at least half the model's window. */
  context_length_exceeded: "max_tokens" | "conversation_too_long" | "context_overflow";
  backend_unavailable:
    | "unknown"
    | "aborted"
    | "internal"
    | "unavailable"
    | "agent_engine_not_found"
    | "provider_error"
    | "stream_reset"
    | "missing_end_stream"
    | "store_unavailable"
    | "instance_unreachable"
    /** This server is stopping: the request was refused, or its answer ended when the drain time was up. */
    | "server_shutting_down"
    /** The server's own code changed on disk while it ran (an upgrade, a rebuild): a restart is needed. */
    | "server_updated"
    | NetworkErrorCode;
  backend_protocol:
    | "outdated_client"
    | "blob_not_found"
    | "unimplemented"
    | "data_loss"
    | "stream_closed"
    /** Cursor ended the Run without `turn_ended` (a cut-off answer, never a success). */
    | "upstream_truncated"
    | "unknown_code";
  timeout: "upstream_timeout" | "deadline_exceeded" | "timeout" | "stalled";
  canceled: "canceled" | "user_aborted";
  internal: "unexpected";
}

/** Every `detail` reason of any code. */
export type ProxyErrorDetail = ProxyErrorDetails[ProxyErrorCode];

const DEFAULT_STATUS: Record<ProxyErrorCode, number> = {
  invalid_request: 400,
  request_too_large: 413,
  unsupported_media_type: 415,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  rate_limited: 429,
  quota_exceeded: 429,
  key_budget_exceeded: 429,
  context_length_exceeded: 400,
  backend_unavailable: 503,
  backend_protocol: 502,
  timeout: 504,
  canceled: 499,
  internal: 500,
};

const DEFAULT_RETRYABLE: Record<ProxyErrorCode, boolean> = {
  invalid_request: false,
  request_too_large: false,
  unsupported_media_type: false,
  unauthenticated: false,
  permission_denied: false,
  not_found: false,
  rate_limited: true,
  quota_exceeded: false,
  key_budget_exceeded: false,
  context_length_exceeded: false,
  backend_unavailable: true,
  backend_protocol: false,
  timeout: true,
  canceled: false,
  internal: false,
};

/** Options accepted by the {@link ProxyError} constructor. */
export interface ProxyErrorOptions<C extends ProxyErrorCode = ProxyErrorCode> {
  /** HTTP status; defaults from the code. */
  status?: number;
  /** Whether retrying the same request may succeed; defaults from the code. */
  retryable?: boolean;
  /** The underlying error. */
  cause?: unknown;
  /** Seconds after which a retry makes sense (rate limits). */
  retryAfterSeconds?: number;
  /** The request field the error is about (OpenAI `param`). */
  param?: string;
  /** A more specific machine-readable reason of this code, e.g. `model_not_found` or `outdated_client`. */
  detail?: ProxyErrorDetails[C];
  /** Response headers that describe the error (a key's `x-ratelimit-*` state on its 429). */
  headers?: Readonly<Record<string, string>>;
  /** A context overflow's sizes: the request's (estimated) tokens and the model's window. */
  contextLength?: ContextLength;
}

/** How long a request was and how much the model takes, in tokens (named by each door's "too long" message). */
export interface ContextLength {
  tokens: number;
  limit: number;
}

/** Typed error with a closed `code`, an HTTP `status`, `retryable` and `cause`. */
export class ProxyError<C extends ProxyErrorCode = ProxyErrorCode> extends Error {
  readonly code: C;
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly param: string | undefined;
  readonly detail: ProxyErrorDetail | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly contextLength: ContextLength | undefined;

  constructor(code: C, message: string, options: ProxyErrorOptions<C> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProxyError";
    this.code = code;
    this.status = options.status ?? DEFAULT_STATUS[code];
    this.retryable = options.retryable ?? DEFAULT_RETRYABLE[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.param = options.param;
    this.detail = options.detail;
    this.headers = options.headers;
    this.contextLength = options.contextLength;
  }

  /** Wraps anything thrown into a ProxyError; a ProxyError is returned unchanged. */
  static from(error: unknown, fallback: ProxyErrorCode = "internal"): ProxyError {
    if (error instanceof ProxyError) return error;
    if (isAbortError(error)) return new ProxyError("canceled", "The request was canceled.", { cause: error });
    const message = error instanceof Error ? error.message : String(error);
    return new ProxyError(fallback, message, {
      cause: error,
      ...(fallback === "internal" ? { detail: "unexpected" as const } : {}),
    });
  }
}

/** True for DOMException AbortError / TimeoutError and Node's ABORT_ERR. */
/**
 * Cursor ended the turn without `turn_ended` (the Run closed, or the engine's events stopped): 502
 * `upstream_truncated`, never retried since output may have started (cursor-protocol-addendum-3 T7).
 */
export function upstreamTruncated(toolCallOpen: boolean): ProxyError<"backend_protocol"> {
  return new ProxyError(
    "backend_protocol",
    toolCallOpen
      ? "Cursor ended the stream without finishing the turn while a tool call was open; the answer is incomplete. Try again."
      : "Cursor ended the stream without finishing the turn; the answer is incomplete. Try again.",
    { detail: "upstream_truncated", retryable: false },
  );
}

/**
 * A tool call whose arguments the caller's client has already been shown in part will not be completed in front of
 * it (the turn ended or Cursor stalled with the call still forming, Cursor closed it without its arguments, or they
 * came complete under another id first): its pieces cannot be taken back from a stream, so the answer is cut off, as
 * when the stream ends without `turn_ended` (same code).
 */
export function toolCallCut(): ProxyError<"backend_protocol"> {
  return new ProxyError(
    "backend_protocol",
    "Cursor did not complete a tool call whose arguments were already being streamed; the answer is incomplete. Try again.",
    { detail: "upstream_truncated", retryable: false },
  );
}

export function isAbortError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || code === "ABORT_ERR";
}
