/**
 * THE inbound error mapping: ConnectError codes, `aiserver.v1.ErrorDetails` in the error details
 * (docs/protocol.md §4.1, §4.12) and Node error codes found anywhere in the `cause` chain become one ProxyError.
 * Nothing here looks at message text, except the one title that marks a client-version refusal (OUTDATED_TITLE).
 *
 * Order: ProxyError as is → ErrorDetails (most specific) → cancellation → Node transport codes → Connect Code.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetails_Error as E, type ErrorDetails, ErrorDetailsSchema } from "../../gen/aiserver/v1/error_pb.js";
import { humanDuration } from "../../util/duration.js";
import {
  isAbortError,
  type NetworkErrorCode,
  ProxyError,
  type ProxyErrorCode,
  type ProxyErrorDetails,
  type ProxyErrorOptions,
} from "../../util/errors.js";
import { CLIENT_VERSION_SETTINGS } from "./client-version.js";

/** Context that makes a mapped message more useful. */
export interface ErrorMappingContext {
  /** The client version we sent, named in the outdated-client message. */
  clientVersion?: string;
}

/**
 * A code with one of its own reasons. No mapping carries a retry delay: `Retry-After` is set only when Cursor says
 * when (its `retry-after` metadata); usage/plan limits last until the plan's limit resets, and a guessed delay made
 * SDKs wait silently.
 */
type Mapping = {
  [C in ProxyErrorCode]: { code: C; detail: ProxyErrorDetails[C]; retryable?: boolean; param?: "model" };
}[ProxyErrorCode];

const QUOTA: Mapping = { code: "quota_exceeded", detail: "usage_limit", retryable: false };
const RATE: Mapping = { code: "rate_limited", detail: "rate_limit", retryable: true };
const AUTH: Mapping = { code: "unauthenticated", detail: "unauthenticated" };
const DENIED: Mapping = { code: "permission_denied", detail: "permission_denied" };
/** Outdated/deprecated client: not the caller's request, not retryable as is; the user must change a setting. */
const OUTDATED: Mapping = { code: "backend_protocol", detail: "outdated_client", retryable: false };
const NOT_FOUND: Mapping = { code: "not_found", detail: "not_found", retryable: false };
const MODEL_GONE: Mapping = { code: "not_found", detail: "model_not_found", param: "model" };
const UNAVAILABLE: Mapping = { code: "backend_unavailable", detail: "unavailable", retryable: true };
const INVALID: Mapping = { code: "invalid_request", detail: "bad_request" };
/** The plan cannot use the model (region, max mode, tier); another model may work. The backend names the model. */
const MODEL_NOT_AVAILABLE: Mapping = {
  code: "permission_denied",
  detail: "model_not_available",
  retryable: false,
  param: "model",
};
const TOO_LONG: Mapping = { code: "context_length_exceeded", detail: "conversation_too_long", retryable: false };
const MAX_TOKENS: Mapping = { code: "context_length_exceeded", detail: "max_tokens", retryable: false };
/**
 * A bare `resource_exhausted` "Error" (no ErrorDetails text): a context overflow, a model the plan cannot use, or a
 * usage limit (cursor-protocol-addendum-3.md E2). Reported as a usage limit unless the backend, which knows the
 * request's size and whether output started, decides it was one of the other two (backend/turn-errors.ts).
 */
const BARE_EXHAUSTED: Mapping = { code: "quota_exceeded", detail: "resource_exhausted", retryable: false };
/** The value names no kind of failure of its own (Cursor's text says what): the Connect code decides. */
const BY_CODE_ONLY = "connect-code" as const;

/**
 * Every ErrorDetails.Error value (cursor-protocol-addendum-2.md §8 and the older references' 15, 16, 17, 19, 24, 26,
 * 27, 32) → mapping. `error-table.test.ts` fails when a value of the enum is missing here.
 */
export const BY_ERROR_DETAILS: ReadonlyMap<E, Mapping | typeof BY_CODE_ONLY> = new Map<
  E,
  Mapping | typeof BY_CODE_ONLY
>([
  [E.UNSPECIFIED, BY_CODE_ONLY],
  [E.BAD_API_KEY, AUTH],
  [E.NOT_LOGGED_IN, AUTH],
  [E.INVALID_AUTH_ID, AUTH],
  [E.NOT_HIGH_ENOUGH_PERMISSIONS, DENIED],
  [E.BAD_MODEL_NAME, MODEL_GONE],
  [E.USER_NOT_FOUND, AUTH],
  [E.FREE_USER_RATE_LIMIT_EXCEEDED, RATE],
  [E.PRO_USER_RATE_LIMIT_EXCEEDED, RATE],
  [E.FREE_USER_USAGE_LIMIT, QUOTA],
  [E.PRO_USER_USAGE_LIMIT, QUOTA],
  [E.AUTH_TOKEN_NOT_FOUND, AUTH],
  [E.AUTH_TOKEN_EXPIRED, { code: "unauthenticated", detail: "token_expired" }],
  // The model provider failed; Cursor's text says how.
  [E.OPENAI, BY_CODE_ONLY],
  [E.OPENAI_RATE_LIMIT_EXCEEDED, RATE],
  [E.OPENAI_ACCOUNT_LIMIT_EXCEEDED, QUOTA],
  [E.TASK_UUID_NOT_FOUND, NOT_FOUND],
  [E.TASK_NO_PERMISSIONS, DENIED],
  [E.AGENT_REQUIRES_LOGIN, AUTH],
  [E.AGENT_ENGINE_NOT_FOUND, { code: "backend_unavailable", detail: "agent_engine_not_found" }],
  [E.MAX_TOKENS, MAX_TOKENS],
  [E.USER_ABORTED_REQUEST, { code: "canceled", detail: "user_aborted" }],
  [E.GENERIC_RATE_LIMIT_EXCEEDED, RATE],
  [E.PRO_USER_ONLY, DENIED],
  [E.API_KEY_NOT_SUPPORTED, DENIED],
  [E.TIMEOUT, { code: "timeout", detail: "upstream_timeout" }],
  [E.SLASH_EDIT_FILE_TOO_LONG, { code: "invalid_request", detail: "file_too_long" }],
  [E.FILE_UNSUPPORTED, { code: "invalid_request", detail: "file_unsupported" }],
  // Bridges have seen the version refusal arrive as this value with title "Update Required" (see OUTDATED_TITLE).
  [E.GPT_4_VISION_PREVIEW_RATE_LIMIT, RATE],
  [E.CUSTOM_MESSAGE, BY_CODE_ONLY],
  [E.OUTDATED_CLIENT, OUTDATED],
  [E.CLAUDE_IMAGE_TOO_LARGE, { code: "invalid_request", detail: "image_too_large" }],
  [E.GITGRAPH_NOT_FOUND, NOT_FOUND],
  // With Code.Internal these two mean "Blob not found" (see blobNotFoundMapping); otherwise a plain not-found.
  [E.FILE_NOT_FOUND, NOT_FOUND],
  [E.API_KEY_RATE_LIMIT, RATE],
  // A newer request superseded this one: trying again helps.
  [E.DEBOUNCED, RATE],
  [E.BAD_REQUEST, INVALID],
  [E.REPOSITORY_SERVICE_REPOSITORY_IS_NOT_INITIALIZED, { code: "invalid_request", detail: "failed_precondition" }],
  [E.UNAUTHORIZED, AUTH],
  [E.NOT_FOUND, NOT_FOUND],
  [E.DEPRECATED, OUTDATED],
  [E.RESOURCE_EXHAUSTED, RATE],
  [E.BAD_USER_API_KEY, AUTH],
  [E.CONVERSATION_TOO_LONG, TOO_LONG],
  [E.USAGE_PRICING_REQUIRED, QUOTA],
  [E.USAGE_PRICING_REQUIRED_CHANGEABLE, QUOTA],
  [E.GITHUB_NO_USER_CREDENTIALS, DENIED],
  [E.GITHUB_USER_NO_ACCESS, DENIED],
  [E.GITHUB_APP_NO_ACCESS, DENIED],
  [E.GITHUB_MULTIPLE_OWNERS, DENIED],
  [E.RATE_LIMITED, RATE],
  [E.RATE_LIMITED_CHANGEABLE, RATE],
  [E.CUSTOM, BY_CODE_ONLY],
  // A hook of the user's (or the team's) refused the request.
  [E.HOOKS_BLOCKED, DENIED],
  [E.SUSPICIOUS_USAGE_BLOCKED, { code: "permission_denied", detail: "account_blocked" }],
  [E.EXTENSION_HOST_TIMEOUT, { code: "timeout", detail: "upstream_timeout" }],
  [E.NETWORK_ERROR, UNAVAILABLE],
  [E.PROVIDER_ERROR, { code: "backend_unavailable", detail: "provider_error", retryable: true }],
  [E.MODEL_BLOCKED, { code: "permission_denied", detail: "model_blocked", param: "model" }],
  // Same as a bare `internal`: transient unless `is_retryable: false` (the backend may rebuild a missing state once).
  [E.INTERNAL, { code: "backend_unavailable", detail: "internal", retryable: true }],
  [E.MAX_MODE_REQUIRED, MODEL_NOT_AVAILABLE],
  [E.MODEL_NO_LONGER_SUPPORTED, MODEL_GONE],
  // Continuing would be billed beyond the plan: the user must accept usage-based pricing first.
  [E.PRICING_WARNING, QUOTA],
  [E.SLOW_POOL, RATE],
  [E.UNSUPPORTED_REGION, MODEL_NOT_AVAILABLE],
  [E.ACCOUNT_CLOSED, { code: "permission_denied", detail: "account_blocked" }],
]);

/**
 * The title Cursor gives a client-version refusal. A refusal has arrived as `resource_exhausted` + ErrorDetails
 * GPT_4_VISION_PREVIEW_RATE_LIMIT with this title (cursor-protocol-addendum-2.md §8): the title, not the enum value,
 * tells it from a rate limit, so this one title is compared (case-insensitively). The only text this module reads.
 */
const OUTDATED_TITLE = "update required";

/**
 * The agent API reports a missing conversation blob as Connect `internal` "Blob not found" (§4.4, EPH `8b167a9`).
 * The text is never matched: the machine-readable form is ErrorDetails NOT_FOUND (or FILE_NOT_FOUND) on an
 * `internal` error, which is what the emulator sends (src/emulator/errors.ts `blobNotFound`). The backend recognises
 * `detail === "blob_not_found"` and rebuilds the state once; a bare `internal` (detail "internal") may be the same
 * failure from a server that attaches no details, so the backend treats it alike. One that survives the rebuild is
 * an upstream state problem the caller cannot fix: 502 (`backend_protocol`), not a 404.
 */
const BLOB_NOT_FOUND: Mapping = { code: "backend_protocol", detail: "blob_not_found", retryable: false };

/**
 * `x-cursor-inference-request-error-type` (cursor-protocol-addendum-3.md E6): Cursor's own clients never retry these.
 * The value is read with or without an `ERROR_` prefix (no real value has been captured). Each names its kind when
 * no ErrorDetails decided; all of them make the error terminal.
 */
export const INFERENCE_ERROR_TYPE_HEADER = "x-cursor-inference-request-error-type";
const TERMINAL_INFERENCE_ERRORS: ReadonlyMap<string, Mapping> = new Map<string, Mapping>([
  ["IMAGE_TOO_LARGE", { code: "invalid_request", detail: "image_too_large", retryable: false }],
  ["MAX_TOKENS", MAX_TOKENS],
  ["CONVERSATION_TOO_LONG", TOO_LONG],
  ["CONTENT_POLICY", { code: "invalid_request", detail: "bad_request", retryable: false }],
  ["DEPRECATED", OUTDATED],
  ["MAX_MODE_REQUIRED", MODEL_NOT_AVAILABLE],
  ["MODEL_NO_LONGER_SUPPORTED", { ...MODEL_GONE, retryable: false }],
  ["UNSUPPORTED_REGION", MODEL_NOT_AVAILABLE],
  ["OUTDATED_CLIENT", OUTDATED],
]);

function inferenceErrorType(error: ConnectError): Mapping | undefined {
  const value = error.metadata
    .get(INFERENCE_ERROR_TYPE_HEADER)
    ?.trim()
    .toUpperCase()
    .replace(/^ERROR_/, "");
  return value === undefined ? undefined : TERMINAL_INFERENCE_ERRORS.get(value);
}

/** No ErrorDetails text at all: what a context overflow and a gated model both look like (E2). */
function isBare(details: ErrorDetails | undefined): boolean {
  if (details === undefined) return true;
  const text = `${details.details?.title ?? ""}${details.details?.detail ?? ""}`.trim();
  return details.error === E.UNSPECIFIED && text === "";
}

function detailsMapping(details: ErrorDetails | undefined, code: Code): Mapping | undefined {
  if (details === undefined) return undefined;
  if (details.details?.title.trim().toLowerCase() === OUTDATED_TITLE) return OUTDATED;
  const notFound = details.error === E.NOT_FOUND || details.error === E.FILE_NOT_FOUND;
  if (notFound && code === Code.Internal) return BLOB_NOT_FOUND;
  const mapping = BY_ERROR_DETAILS.get(details.error);
  return mapping === BY_CODE_ONLY ? undefined : mapping;
}

/** Connect Code → mapping, used when no ErrorDetails decided. */
const BY_CODE: Record<Code, Mapping> = {
  [Code.Canceled]: { code: "canceled", detail: "canceled" },
  [Code.Unknown]: { code: "backend_unavailable", detail: "unknown" },
  [Code.InvalidArgument]: { code: "invalid_request", detail: "invalid_argument" },
  [Code.DeadlineExceeded]: { code: "timeout", detail: "deadline_exceeded" },
  [Code.NotFound]: { code: "not_found", detail: "not_found" },
  [Code.AlreadyExists]: { code: "invalid_request", detail: "already_exists" },
  [Code.PermissionDenied]: DENIED,
  // RAPH maps gRPC status 8 on the agent stream to "You've hit your usage limit" (§1.3): quota, not a blip.
  [Code.ResourceExhausted]: QUOTA,
  [Code.FailedPrecondition]: { code: "invalid_request", detail: "failed_precondition" },
  [Code.Aborted]: { code: "backend_unavailable", detail: "aborted" },
  [Code.OutOfRange]: { code: "invalid_request", detail: "out_of_range" },
  [Code.Unimplemented]: { code: "backend_protocol", detail: "unimplemented", retryable: false },
  // `internal` covers "Blob not found" (§4.4) as well as real server faults; the text is not classified here.
  // detail "internal" tells the backend to treat it as a possibly-missing-state failure and rebuild once. Cursor's
  // clients retry it (addendum 2 §8: without details, `internal` is retryable), so the client is told it may.
  [Code.Internal]: { code: "backend_unavailable", detail: "internal", retryable: true },
  [Code.Unavailable]: { code: "backend_unavailable", detail: "unavailable", retryable: true },
  [Code.DataLoss]: { code: "backend_protocol", detail: "data_loss" },
  [Code.Unauthenticated]: AUTH,
};

/** Node/undici error codes that mean the connection failed or dropped: backend_unavailable, retryable. */
const NETWORK_CODES = new Set<NetworkErrorCode>([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ERR_STREAM_PREMATURE_CLOSE",
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_STREAM_DESTROYED",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/** The error itself and every `cause` below it (cycle-safe). */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && !chain.includes(current)) {
    chain.push(current);
    current = typeof current === "object" ? (current as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

/** The first Node-style transport error code in the cause chain (ECONNREFUSED, NGHTTP2_*, ERR_HTTP2_*…). */
export function findNetworkErrorCode(error: unknown): NetworkErrorCode | undefined {
  for (const link of causeChain(error)) {
    if (typeof link !== "object" || link === null) continue;
    const code = (link as { code?: unknown }).code;
    if (typeof code === "string" && isNetworkErrorCode(code)) return code;
  }
  return undefined;
}

function isNetworkErrorCode(code: string): code is NetworkErrorCode {
  return NETWORK_CODES.has(code as NetworkErrorCode) || code.startsWith("ERR_HTTP2_") || code.startsWith("NGHTTP2_");
}

/** The first ConnectError in the cause chain. */
function findConnectError(error: unknown): ConnectError | undefined {
  for (const link of causeChain(error)) if (link instanceof ConnectError) return link;
  return undefined;
}

/** Decodes `aiserver.v1.ErrorDetails` from a ConnectError's details (undefined when absent or undecodable). */
export function findErrorDetails(error: ConnectError): ErrorDetails | undefined {
  try {
    return error.findDetails(ErrorDetailsSchema)[0];
  } catch {
    return undefined;
  }
}

/** `retry-after` in seconds (delta-seconds or HTTP date) from error metadata. */
function retryAfterOf(error: ConnectError): number | undefined {
  const value = error.metadata.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function messageFor(
  mapping: Mapping,
  error: ConnectError,
  details: ErrorDetails | undefined,
  ctx: ErrorMappingContext,
  retryAfterSeconds: number | undefined,
) {
  const upstream = upstreamText(error, details);
  switch (mapping.detail) {
    case "outdated_client":
      return (
        `Cursor rejected client version ${ctx.clientVersion ?? "(unknown)"} as outdated. Set ${CLIENT_VERSION_SETTINGS} ` +
        `to a current cursor-agent version (cli-YYYY.MM.DD-sha), or install/update cursor-agent. Upstream: ${upstream}`
      );
    case "usage_limit":
      return `Cursor usage limit reached (${usageLimitName(details)}): ${upstream}${limitHints(details)} ${resetText(retryAfterSeconds)}`;
    case "resource_exhausted":
      return `Cursor refused the request as resource_exhausted without saying why (a usage limit, a request too large for the model, or a model the plan cannot use): ${upstream} ${resetText(retryAfterSeconds)}`;
    case "rate_limit":
      return `Cursor rate limit: ${upstream}`;
    case "blob_not_found":
      return `Cursor could not find the stored conversation state (an upstream state problem; the bridge rebuilds it from the history once before giving up): ${upstream}`;
    case "unauthenticated":
    case "token_expired":
      return `Cursor rejected the login (${mapping.detail.replaceAll("_", " ")}): ${upstream} Run \`cursor-bridge login\` to sign in again.`;
    default:
      return `Cursor ${mapping.detail.replaceAll("_", " ")}: ${upstream}`;
  }
}

/**
 * What Cursor said: its title and detail together (current clients show both), else the Connect message. A detail
 * that already starts with the title is not repeated.
 */
function upstreamText(error: ConnectError, details: ErrorDetails | undefined): string {
  const title = details?.details?.title.trim() ?? "";
  const detail = details?.details?.detail.trim() ?? "";
  if (title === "" && detail === "") return error.rawMessage;
  if (title === "" || detail.startsWith(title)) return detail;
  if (detail === "") return title;
  return `${title}: ${detail}`;
}

function fromConnectError(error: ConnectError, original: unknown, ctx: ErrorMappingContext): ProxyError {
  const details = findErrorDetails(error);
  const byDetails = detailsMapping(details, error.code);
  if (byDetails === undefined) {
    const local = localCancellation(original);
    if (local !== undefined) return local;
    if (error.code === Code.Canceled) {
      return new ProxyError("canceled", "The Cursor request was canceled.", { cause: original, detail: "canceled" });
    }
    const network = findNetworkErrorCode(original);
    if (network !== undefined) return networkError(network, original);
  }
  const byHeader = inferenceErrorType(error);
  const bare = error.code === Code.ResourceExhausted && byDetails === undefined && isBare(details);
  const mapping: Mapping = byDetails ??
    byHeader ??
    (bare ? BARE_EXHAUSTED : undefined) ??
    BY_CODE[error.code] ?? { code: "backend_protocol", detail: "unknown_code" };
  const options: ProxyErrorOptions = { cause: original, detail: mapping.detail };
  if (mapping.retryable !== undefined) options.retryable = mapping.retryable;
  // Cursor's SDK treats CUSTOM_MESSAGE as final unless it says `is_retryable: true` (cursor-protocol-addendum-3.md
  // E6), whatever the Connect code: its text is Cursor's own verdict on this request, not a transport blip.
  if (details?.error === E.CUSTOM_MESSAGE) options.retryable = false;
  // Current clients trust `is_retryable` when Cursor sends it (addendum 2 §8); so does `x-should-retry`.
  const isRetryable = details?.details?.isRetryable;
  if (isRetryable !== undefined) options.retryable = isRetryable;
  // A value of E6 is terminal whatever else was said.
  if (byHeader !== undefined) options.retryable = false;
  // Retry-After only when Cursor says when.
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== undefined) options.retryAfterSeconds = retryAfter;
  if (mapping.param !== undefined) options.param = mapping.param;
  return new ProxyError(mapping.code, messageFor(mapping, error, details, ctx, options.retryAfterSeconds), options);
}

/** A TimeoutError (AbortSignal.timeout) → timeout; an AbortError → canceled; else undefined. */
function localCancellation(error: unknown): ProxyError | undefined {
  const chain = causeChain(error);
  const isTimeout = (link: unknown) =>
    typeof link === "object" && link !== null && (link as { name?: unknown }).name === "TimeoutError";
  if (chain.some(isTimeout)) {
    return new ProxyError("timeout", "The Cursor request timed out.", { cause: error, detail: "timeout" });
  }
  if (chain.some((link) => isAbortError(link) && !isTimeout(link))) {
    return new ProxyError("canceled", "The Cursor request was canceled.", { cause: error, detail: "canceled" });
  }
  return undefined;
}

/** Which limit: the plan's usage limit, a free plan's, or usage-based pricing that must be enabled. */
function usageLimitName(details: ErrorDetails | undefined): string {
  switch (details?.error) {
    case E.FREE_USER_USAGE_LIMIT:
      return "free plan usage limit";
    case E.PRO_USER_USAGE_LIMIT:
      return "plan usage limit";
    case E.USAGE_PRICING_REQUIRED:
    case E.USAGE_PRICING_REQUIRED_CHANGEABLE:
      return "usage-based pricing required";
    case E.OPENAI_ACCOUNT_LIMIT_EXCEEDED:
      return "model provider account limit";
    case E.PRICING_WARNING:
      return "usage-based pricing must be accepted";
    default:
      return "usage limit";
  }
}

/**
 * What Cursor's usage-limit refusal adds in `additional_info` (cursor-protocol-addendum-3.md E3): the model it would
 * fall back to and whether the spend limit (not the included usage) was hit.
 */
function limitHints(details: ErrorDetails | undefined): string {
  const info = details?.details?.additionalInfo ?? {};
  const hints: string[] = [];
  const spend = info.spendLimitHit?.trim().toLowerCase();
  if (spend === "true") hints.push("Your spend limit was hit; raise it at https://cursor.com/dashboard.");
  const fallback = info.fallbackModel?.trim();
  if (fallback !== undefined && fallback !== "") hints.push(`Cursor suggests the model ${fallback} meanwhile.`);
  return hints.length === 0 ? "" : ` ${hints.join(" ")}`;
}

function resetText(retryAfterSeconds: number | undefined): string {
  if (retryAfterSeconds === undefined) {
    return "Cursor did not say when it resets; check your plan's usage at https://cursor.com/dashboard. Retrying will not help until then.";
  }
  const at = new Date(Date.now() + retryAfterSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return `It resets at ${at} (${humanDuration(retryAfterSeconds * 1000)}).`;
}

function networkError(code: NetworkErrorCode, cause: unknown): ProxyError {
  return new ProxyError("backend_unavailable", `Connection to Cursor failed (${code}).`, {
    cause,
    retryable: true,
    detail: code,
  });
}

/**
 * Maps anything thrown by a Cursor call to a ProxyError (by Code, ErrorDetails and Node error codes; never by text).
 * A ProxyError passes through unchanged.
 */
export function toProxyError(error: unknown, context: ErrorMappingContext = {}): ProxyError {
  // Our own classification wins, also when connect-es wrapped it (an abort reason becomes a ConnectError's cause).
  const own = causeChain(error).find((link): link is ProxyError => link instanceof ProxyError);
  if (own !== undefined) return own;
  const connectError = findConnectError(error);
  if (connectError !== undefined) return fromConnectError(connectError, error, context);
  const local = localCancellation(error);
  if (local !== undefined) return local;
  const network = findNetworkErrorCode(error);
  if (network !== undefined) return networkError(network, error);
  return ProxyError.from(error, "internal");
}
