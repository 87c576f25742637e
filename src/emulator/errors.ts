/**
 * Connect errors the emulator sends, each with a machine-readable `aiserver.v1.ErrorDetails` detail
 * (docs/protocol.md §4.1: details of type "aiserver.v1.ErrorDetails", §4.12 for the enum).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../gen/aiserver/v1/error_pb.js";
import type { ScriptedErrorCode } from "./directives.js";

/**
 * The response header (Connect error metadata, so a stream's end-of-stream trailers) naming an inference error's
 * kind; Cursor's SDK reads it into `inferenceRequestErrorType` (cursor-protocol-addendum-3.md E6).
 */
export const INFERENCE_ERROR_TYPE_HEADER = "x-cursor-inference-request-error-type";

/**
 * The errors a client must not retry (E6): the header value each carries, by the ErrorDetails value the emulator
 * sends it with. `CONTENT_POLICY` has no ErrorDetails value of its own: the emulator sends it as `CUSTOM_MESSAGE`
 * (which the SDK treats as final unless `is_retryable` is true) with this header, as docs/protocol.md §4.13 says.
 */
const FINAL_ERROR_TYPES: Partial<Record<keyof typeof ErrorDetails_Error, string>> = {
  CLAUDE_IMAGE_TOO_LARGE: "IMAGE_TOO_LARGE",
  MAX_TOKENS: "MAX_TOKENS",
  CONVERSATION_TOO_LONG: "CONVERSATION_TOO_LONG",
  DEPRECATED: "DEPRECATED",
  MAX_MODE_REQUIRED: "MAX_MODE_REQUIRED",
  MODEL_NO_LONGER_SUPPORTED: "MODEL_NO_LONGER_SUPPORTED",
  UNSUPPORTED_REGION: "UNSUPPORTED_REGION",
  OUTDATED_CLIENT: "OUTDATED_CLIENT",
};

/** Directive names for E6 kinds whose ErrorDetails value is spelt otherwise (`[[emu:error CONTENT_POLICY]]`). */
export const ERROR_NAME_ALIASES: Readonly<Record<string, keyof typeof ErrorDetails_Error>> = {
  IMAGE_TOO_LARGE: "CLAUDE_IMAGE_TOO_LARGE",
  CONTENT_POLICY: "CUSTOM_MESSAGE",
};

/** Every E6 header value, in the SDK's order. */
export const FINAL_INFERENCE_ERROR_TYPES = [
  "IMAGE_TOO_LARGE",
  "MAX_TOKENS",
  "CONVERSATION_TOO_LONG",
  "CONTENT_POLICY",
  "DEPRECATED",
  "MAX_MODE_REQUIRED",
  "MODEL_NO_LONGER_SUPPORTED",
  "UNSUPPORTED_REGION",
  "OUTDATED_CLIENT",
] as const;

/** The metadata of a final error of kind `type`: its E6 header, or none. */
function finalMetadata(type: string | undefined): HeadersInit | undefined {
  return type === undefined ? undefined : { [INFERENCE_ERROR_TYPE_HEADER]: type };
}

function withDetails(
  message: string,
  code: Code,
  error: ErrorDetails_Error,
  title: string,
  isExpected = true,
): ConnectError {
  const type = FINAL_ERROR_TYPES[ErrorDetails_Error[error] as keyof typeof ErrorDetails_Error];
  return new ConnectError(message, code, finalMetadata(type), [
    {
      desc: ErrorDetailsSchema,
      value: {
        error,
        details: { title, detail: message, ...(type === undefined ? {} : { isRetryable: false }) },
        isExpected,
      },
    },
  ]);
}

/** The real service's answer to a missing or malformed blob (EPH commit 8b167a9: `internal: Blob not found`). */
export function blobNotFound(detail?: string): ConnectError {
  const message = detail === undefined ? "Blob not found" : `Blob not found: ${detail}`;
  return withDetails(message, Code.Internal, ErrorDetails_Error.NOT_FOUND, "Blob not found", false);
}

/** Usage limit: gRPC status 8 / Connect `resource_exhausted` on the agent stream (§1.3, RAPH 2026-02-04). */
export function usageLimit(): ConnectError {
  return withDetails(
    "You've hit your usage limit. Upgrade your plan or wait for your limit to reset.",
    Code.ResourceExhausted,
    ErrorDetails_Error.PRO_USER_USAGE_LIMIT,
    "Usage limit reached",
  );
}

/**
 * Outdated client. The reference documents only the legacy API's "please update" rejection (§1.2, §8, §9 item 1);
 * the agent API's code and wording here are a guess modelled on it.
 */
export function outdatedClient(version: string): ConnectError {
  return withDetails(
    `Your Cursor client (${version}) is outdated. Please update to the latest version of Cursor.`,
    Code.FailedPrecondition,
    ErrorDetails_Error.OUTDATED_CLIENT,
    "Update required",
  );
}

/**
 * Cursor's refusal of an outdated client on a Run (cursor-protocol-addendum-3.md E1): `resource_exhausted` "Error"
 * with ErrorDetails 28 (GPT_4_VISION_PREVIEW_RATE_LIMIT) titled "Update Required", expected, without `is_retryable`.
 */
export function updateRequired(): ConnectError {
  return new ConnectError("Error", Code.ResourceExhausted, undefined, [
    {
      desc: ErrorDetailsSchema,
      value: {
        error: ErrorDetails_Error.GPT_4_VISION_PREVIEW_RATE_LIMIT,
        details: {
          title: "Update Required",
          detail: "Your version of Cursor is no longer supported. Please update to the latest version.",
        },
        isExpected: true,
      },
    },
  ]);
}

/** Why authentication failed. */
export type UnauthenticatedReason = "missing" | "malformed" | "invalid" | "expired" | "scripted";

/** Missing, malformed, unknown or expired credentials. */
export function unauthenticated(reason: UnauthenticatedReason): ConnectError {
  switch (reason) {
    case "missing":
      return withDetails(
        "Missing authorization header.",
        Code.Unauthenticated,
        ErrorDetails_Error.NOT_LOGGED_IN,
        "Not logged in",
      );
    case "malformed":
      return withDetails(
        "Malformed authorization header: expected `Bearer <token>`.",
        Code.Unauthenticated,
        ErrorDetails_Error.NOT_LOGGED_IN,
        "Not logged in",
      );
    case "expired":
      return withDetails(
        "Access token expired.",
        Code.Unauthenticated,
        ErrorDetails_Error.AUTH_TOKEN_EXPIRED,
        "Session expired",
      );
    default:
      return withDetails(
        "Invalid or unknown access token.",
        Code.Unauthenticated,
        ErrorDetails_Error.AUTH_TOKEN_NOT_FOUND,
        "Not logged in",
      );
  }
}

/** A request the server refuses as malformed (missing header, bad model, protocol violation). */
export function badRequest(message: string, error = ErrorDetails_Error.BAD_REQUEST): ConnectError {
  return withDetails(message, Code.InvalidArgument, error, "Bad request", false);
}

/**
 * Cursor's bare refusal (cursor-protocol-addendum-3.md E2): `resource_exhausted` "Error" with no ErrorDetails and no
 * token sent, its answer both to a conversation too long for the model and to a model the plan cannot use.
 */
export function bareResourceExhausted(): ConnectError {
  return new ConnectError("Error", Code.ResourceExhausted);
}

/** An internal server error. */
export function internalError(message = "Internal server error"): ConnectError {
  return withDetails(message, Code.Internal, ErrorDetails_Error.UNSPECIFIED, "Internal error", false);
}

/**
 * The Connect code the emulator sends with an ErrorDetails value: the code a client falls back on when it does not
 * know the value (addendum 2 §8: `resource_exhausted` for limits, `unauthenticated` for auth, …). Values not listed
 * here get `failed_precondition` ("the request cannot be served as it stands").
 */
const CODE_OF: Partial<Record<keyof typeof ErrorDetails_Error, Code>> = {
  UNSPECIFIED: Code.Internal,
  INTERNAL: Code.Internal,
  CUSTOM: Code.Unknown,
  CUSTOM_MESSAGE: Code.Unknown,
  OPENAI: Code.Unavailable,
  PROVIDER_ERROR: Code.Unavailable,
  NETWORK_ERROR: Code.Unavailable,
  TIMEOUT: Code.DeadlineExceeded,
  EXTENSION_HOST_TIMEOUT: Code.DeadlineExceeded,
  USER_ABORTED_REQUEST: Code.Canceled,
  BAD_API_KEY: Code.Unauthenticated,
  NOT_LOGGED_IN: Code.Unauthenticated,
  INVALID_AUTH_ID: Code.Unauthenticated,
  USER_NOT_FOUND: Code.Unauthenticated,
  AUTH_TOKEN_NOT_FOUND: Code.Unauthenticated,
  AUTH_TOKEN_EXPIRED: Code.Unauthenticated,
  AGENT_REQUIRES_LOGIN: Code.Unauthenticated,
  UNAUTHORIZED: Code.Unauthenticated,
  BAD_USER_API_KEY: Code.Unauthenticated,
  NOT_FOUND: Code.NotFound,
  FILE_NOT_FOUND: Code.NotFound,
  BAD_MODEL_NAME: Code.NotFound,
  BAD_REQUEST: Code.InvalidArgument,
  CONVERSATION_TOO_LONG: Code.InvalidArgument,
  MAX_TOKENS: Code.InvalidArgument,
  NOT_HIGH_ENOUGH_PERMISSIONS: Code.PermissionDenied,
  MODEL_BLOCKED: Code.PermissionDenied,
  HOOKS_BLOCKED: Code.PermissionDenied,
  UNSUPPORTED_REGION: Code.PermissionDenied,
  ACCOUNT_CLOSED: Code.PermissionDenied,
  SUSPICIOUS_USAGE_BLOCKED: Code.PermissionDenied,
};
for (const name of Object.keys(ErrorDetails_Error) as (keyof typeof ErrorDetails_Error)[]) {
  if (/RATE_LIMIT|USAGE_LIMIT|PRICING|RESOURCE_EXHAUSTED|SLOW_POOL|ACCOUNT_LIMIT|DEBOUNCED/.test(name)) {
    CODE_OF[name] = Code.ResourceExhausted;
  }
}

/**
 * `[[emu:error NAME]]`: ErrorDetails{error: NAME, details: {title: "Emulated NAME", detail, is_retryable?}}. A final
 * kind (E6) carries `is_retryable: false` and its `x-cursor-inference-request-error-type`; `retryable` sends
 * `is_retryable: true` and no such header instead.
 */
export function enumError(name: string, retryable: boolean): ConnectError {
  const key = ERROR_NAME_ALIASES[name] ?? (name as keyof typeof ErrorDetails_Error);
  const error = ErrorDetails_Error[key];
  const full = `ERROR_${key}`;
  const detail = `The emulator was asked to fail this turn with ${full}.`;
  const type = name === "CONTENT_POLICY" ? name : FINAL_ERROR_TYPES[key];
  const retry = retryable ? { isRetryable: true } : type === undefined ? {} : { isRetryable: false };
  return new ConnectError(
    detail,
    CODE_OF[key] ?? Code.FailedPrecondition,
    retryable ? undefined : finalMetadata(type),
    [{ desc: ErrorDetailsSchema, value: { error, details: { title: `Emulated ${name}`, detail, ...retry } } }],
  );
}

/** The error a `[[emu:error CODE]]` directive asks for. */
export function scriptedError(code: ScriptedErrorCode, clientVersion: string): ConnectError {
  if (typeof code === "object") return enumError(code.name, code.retryable);
  switch (code) {
    case "usage_limit":
      return usageLimit();
    case "unauthenticated":
      return unauthenticated("scripted");
    case "outdated_client":
      return outdatedClient(clientVersion);
    case "internal":
      return internalError("Scripted internal error");
    case "blob_not_found":
      return blobNotFound();
  }
}

/**
 * A bare base model id sent in `model_details` (cursor-protocol-addendum-3.md P8: Connect `not_found`, even with
 * parameters attached); the suffixed flat ids and `requested_model` alone work.
 */
export function modelNotFound(message: string): ConnectError {
  return withDetails(message, Code.NotFound, ErrorDetails_Error.NOT_FOUND, "Model not found", false);
}

/**
 * A model id the server does not know: Connect `not_found` with ERROR_BAD_MODEL_NAME (cursor-protocol-addendum-3.md
 * E4, seen live; the bare id of a model that needs a variant suffix gets the same value, P8).
 */
export function badModelName(message: string): ConnectError {
  return withDetails(message, Code.NotFound, ErrorDetails_Error.BAD_MODEL_NAME, "Bad model name", false);
}
