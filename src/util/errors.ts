/**
 * The one error type that crosses layers. Inbound edges (protocol/) map upstream failures into it by code;
 * outbound edges (openai/, cli/) turn it into an HTTP body or an exit code. Never classify by message text.
 */

/** Closed set of error codes used everywhere inside cursor-bridge. */
export type ProxyErrorCode =
  | "invalid_request"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "rate_limited"
  | "quota_exceeded"
  | "context_length_exceeded"
  | "backend_unavailable"
  | "backend_protocol"
  | "timeout"
  | "canceled"
  | "internal";

const DEFAULT_STATUS: Record<ProxyErrorCode, number> = {
  invalid_request: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  rate_limited: 429,
  quota_exceeded: 429,
  context_length_exceeded: 400,
  backend_unavailable: 503,
  backend_protocol: 502,
  timeout: 504,
  canceled: 499,
  internal: 500,
};

const DEFAULT_RETRYABLE: Record<ProxyErrorCode, boolean> = {
  invalid_request: false,
  unauthenticated: false,
  permission_denied: false,
  not_found: false,
  rate_limited: true,
  quota_exceeded: false,
  context_length_exceeded: false,
  backend_unavailable: true,
  backend_protocol: false,
  timeout: true,
  canceled: false,
  internal: false,
};

/** Options accepted by the {@link ProxyError} constructor. */
export interface ProxyErrorOptions {
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
  /** A more specific machine-readable reason, e.g. `model_not_found` or `outdated_client`. */
  detail?: string;
}

/** Typed error with a closed `code`, an HTTP `status`, `retryable` and `cause`. */
export class ProxyError extends Error {
  readonly code: ProxyErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly param: string | undefined;
  readonly detail: string | undefined;

  constructor(code: ProxyErrorCode, message: string, options: ProxyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProxyError";
    this.code = code;
    this.status = options.status ?? DEFAULT_STATUS[code];
    this.retryable = options.retryable ?? DEFAULT_RETRYABLE[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.param = options.param;
    this.detail = options.detail;
  }

  /** Wraps anything thrown into a ProxyError; a ProxyError is returned unchanged. */
  static from(error: unknown, fallback: ProxyErrorCode = "internal"): ProxyError {
    if (error instanceof ProxyError) return error;
    if (isAbortError(error)) return new ProxyError("canceled", "The request was canceled.", { cause: error });
    const message = error instanceof Error ? error.message : String(error);
    return new ProxyError(fallback, message, { cause: error });
  }
}

/** True for DOMException AbortError / TimeoutError and Node's ABORT_ERR. */
export function isAbortError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === "AbortError" || code === "ABORT_ERR";
}
