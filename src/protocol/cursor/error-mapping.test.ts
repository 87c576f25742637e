import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorFromJson } from "@connectrpc/connect/protocol-connect";
import { describe, expect, it } from "vitest";
import { ErrorDetails_Error as E, ErrorDetailsSchema } from "../../gen/aiserver/v1/error_pb.js";
import { ProxyError, type ProxyErrorCode } from "../../util/errors.js";
import { EnvelopeError } from "../connect/envelope.js";
import { causeChain, findNetworkErrorCode, toProxyError } from "./error-mapping.js";

const withDetails = (code: Code, error: E, metadata?: HeadersInit) =>
  new ConnectError("upstream says no", code, metadata, [
    { desc: ErrorDetailsSchema, value: { error, details: { title: "T", detail: "upstream detail" } } },
  ]);

const nodeError = (code: string, message = "socket trouble") => Object.assign(new Error(message), { code });

interface Row {
  name: string;
  error: unknown;
  code: ProxyErrorCode;
  detail: string | undefined;
  retryable: boolean;
  status: number;
}

const rows: Row[] = [
  // ErrorDetails decide first.
  ...[E.FREE_USER_USAGE_LIMIT, E.PRO_USER_USAGE_LIMIT, E.USAGE_PRICING_REQUIRED, E.OPENAI_ACCOUNT_LIMIT_EXCEEDED].map(
    (e) => ({
      name: `usage limit ${E[e]}`,
      error: withDetails(Code.ResourceExhausted, e),
      code: "quota_exceeded" as const,
      detail: "usage_limit",
      retryable: false,
      status: 429,
    }),
  ),
  ...[E.RATE_LIMITED, E.PRO_USER_RATE_LIMIT_EXCEEDED, E.GENERIC_RATE_LIMIT_EXCEEDED, E.API_KEY_RATE_LIMIT].map((e) => ({
    name: `rate limit ${E[e]}`,
    error: withDetails(Code.ResourceExhausted, e),
    code: "rate_limited" as const,
    detail: "rate_limit",
    retryable: true,
    status: 429,
  })),
  ...[E.NOT_LOGGED_IN, E.AUTH_TOKEN_NOT_FOUND, E.BAD_API_KEY].map((e) => ({
    name: `auth ${E[e]}`,
    error: withDetails(Code.Unauthenticated, e),
    code: "unauthenticated" as const,
    detail: "unauthenticated",
    retryable: false,
    status: 401,
  })),
  row("expired token", withDetails(Code.Unauthenticated, E.AUTH_TOKEN_EXPIRED), "unauthenticated", "token_expired"),
  row(
    "outdated client",
    withDetails(Code.FailedPrecondition, E.OUTDATED_CLIENT),
    "backend_protocol",
    "outdated_client",
  ),
  row("deprecated", withDetails(Code.Unimplemented, E.DEPRECATED), "backend_protocol", "outdated_client"),
  row("blob not found", withDetails(Code.Internal, E.NOT_FOUND), "backend_protocol", "blob_not_found"),
  row("plain not found", withDetails(Code.NotFound, E.NOT_FOUND), "not_found", "not_found"),
  row("bad model", withDetails(Code.InvalidArgument, E.BAD_MODEL_NAME), "not_found", "model_not_found"),
  row(
    "too long",
    withDetails(Code.InvalidArgument, E.CONVERSATION_TOO_LONG),
    "context_length_exceeded",
    "conversation_too_long",
  ),
  row("pro only", withDetails(Code.PermissionDenied, E.PRO_USER_ONLY), "permission_denied", "permission_denied"),
  row("upstream timeout", withDetails(Code.Unknown, E.TIMEOUT), "timeout", "upstream_timeout", true),
  // Unmapped ErrorDetails values fall through to the Code.
  // CUSTOM_MESSAGE is final unless Cursor says otherwise (addendum 3 E6); its code still decides the kind.
  row("custom message", withDetails(Code.Unavailable, E.CUSTOM_MESSAGE), "backend_unavailable", "unavailable", false),
  row("custom, by code", withDetails(Code.Unavailable, E.CUSTOM), "backend_unavailable", "unavailable", true),
  // `internal` is transient (addendum 2 §8): clients retry it, unless Cursor says `is_retryable: false`.
  row("internal, unspecified", withDetails(Code.Internal, E.UNSPECIFIED), "backend_unavailable", "internal", true),
  row("ERROR_INTERNAL", withDetails(Code.Internal, E.INTERNAL), "backend_unavailable", "internal", true),
  // By Code alone.
  // Bare (no ErrorDetails): a usage limit, a context overflow or a gated model; the backend decides (turn-errors.ts).
  row("resource_exhausted", new ConnectError("Error", Code.ResourceExhausted), "quota_exceeded", "resource_exhausted"),
  row("unauthenticated", new ConnectError("x", Code.Unauthenticated), "unauthenticated", "unauthenticated"),
  row("permission_denied", new ConnectError("x", Code.PermissionDenied), "permission_denied", "permission_denied"),
  row("deadline_exceeded", new ConnectError("x", Code.DeadlineExceeded), "timeout", "deadline_exceeded", true),
  row("canceled", new ConnectError("x", Code.Canceled), "canceled", "canceled"),
  row("unavailable", new ConnectError("x", Code.Unavailable), "backend_unavailable", "unavailable", true),
  row("internal", new ConnectError("x", Code.Internal), "backend_unavailable", "internal", true),
  row("unknown", new ConnectError("x", Code.Unknown), "backend_unavailable", "unknown", true),
  row("aborted", new ConnectError("x", Code.Aborted), "backend_unavailable", "aborted", true),
  row("invalid_argument", new ConnectError("x", Code.InvalidArgument), "invalid_request", "invalid_argument"),
  row("failed_precondition", new ConnectError("x", Code.FailedPrecondition), "invalid_request", "failed_precondition"),
  row("not_found", new ConnectError("x", Code.NotFound), "not_found", "not_found"),
  row("unimplemented", new ConnectError("x", Code.Unimplemented), "backend_protocol", "unimplemented"),
  row("data_loss", new ConnectError("x", Code.DataLoss), "backend_protocol", "data_loss"),
  // Node codes anywhere in the cause chain.
  row(
    "ECONNREFUSED under fetch failed",
    new TypeError("fetch failed", { cause: nodeError("ECONNREFUSED") }),
    "backend_unavailable",
    "ECONNREFUSED",
    true,
  ),
  row(
    "ECONNRESET two levels deep",
    new Error("a", { cause: new Error("b", { cause: nodeError("ECONNRESET") }) }),
    "backend_unavailable",
    "ECONNRESET",
    true,
  ),
  row(
    "NGHTTP2 reset wrapped in a ConnectError",
    new ConnectError("x", Code.Internal, undefined, undefined, nodeError("ERR_HTTP2_STREAM_ERROR")),
    "backend_unavailable",
    "ERR_HTTP2_STREAM_ERROR",
    true,
  ),
  row("NGHTTP2 code", nodeError("NGHTTP2_REFUSED_STREAM"), "backend_unavailable", "NGHTTP2_REFUSED_STREAM", true),
  row(
    "undici socket",
    new TypeError("terminated", { cause: nodeError("UND_ERR_SOCKET") }),
    "backend_unavailable",
    "UND_ERR_SOCKET",
    true,
  ),
  // Cancellation.
  row("DOMException AbortError", new DOMException("aborted", "AbortError"), "canceled", "canceled"),
  row(
    "ConnectError caused by AbortSignal.timeout",
    new ConnectError("x", Code.Unknown, undefined, undefined, new DOMException("t", "TimeoutError")),
    "timeout",
    "timeout",
    true,
  ),
  row(
    "ConnectError caused by an abort",
    new ConnectError("x", Code.Internal, undefined, undefined, new DOMException("a", "AbortError")),
    "canceled",
    "canceled",
  ),
  row("ABORT_ERR", nodeError("ABORT_ERR"), "canceled", "canceled"),
  // Anything else.
  row("plain error", new Error("??"), "internal", "unexpected"),
  row("a string", "weird", "internal", "unexpected"),
];

function row(name: string, error: unknown, code: ProxyErrorCode, detail?: string, retryable?: boolean): Row {
  const defaults = new ProxyError(code, "x");
  return { name, error, code, detail, retryable: retryable ?? defaults.retryable, status: defaults.status };
}

describe("toProxyError — the inbound mapping table", () => {
  it.each(rows)("$name → $code", ({ error, code, detail, retryable, status }) => {
    const mapped = toProxyError(error, { clientVersion: "cli-2020.01.01-0000000" });
    expect(mapped).toBeInstanceOf(ProxyError);
    expect({ code: mapped.code, detail: mapped.detail, retryable: mapped.retryable, status: mapped.status }).toEqual({
      code,
      detail,
      retryable,
      status,
    });
    expect(mapped.cause).toBe(error);
  });

  it("keeps an internal error final when Cursor says is_retryable false, or names a final kind", () => {
    const final = (isRetryable: boolean) =>
      new ConnectError("x", Code.Internal, undefined, [
        { desc: ErrorDetailsSchema, value: { error: E.INTERNAL, details: { title: "T", detail: "d", isRetryable } } },
      ]);
    expect(toProxyError(final(false)).retryable).toBe(false);
    expect(toProxyError(final(true)).retryable).toBe(true);
    const typed = new ConnectError("x", Code.Internal, { "x-cursor-inference-request-error-type": "MAX_TOKENS" });
    expect(toProxyError(typed)).toMatchObject({ code: "context_length_exceeded", retryable: false });
  });

  it("passes a ProxyError (including EnvelopeError) through unchanged", () => {
    const original = new ProxyError("timeout", "stalled");
    expect(toProxyError(original)).toBe(original);
    const framing = new EnvelopeError("bad frame");
    expect(toProxyError(framing)).toBe(framing);
  });

  it("returns our own ProxyError when connect-es wrapped it as a cause", () => {
    const reason = new ProxyError("timeout", "stalled");
    expect(toProxyError(new ConnectError("canceled", Code.Canceled, undefined, undefined, reason))).toBe(reason);
  });

  it("names the setting to change on an outdated client", () => {
    const mapped = toProxyError(withDetails(Code.FailedPrecondition, E.OUTDATED_CLIENT), {
      clientVersion: "cli-2020.01.01-0000000",
    });
    expect(mapped.message).toContain("cli-2020.01.01-0000000");
    expect(mapped.message).toContain("--client-version");
    expect(mapped.message).toContain("CURSOR_CLIENT_VERSION");
  });

  it("gives a retry delay only when Cursor says when (retry-after), for rate and usage limits alike", () => {
    const hinted = toProxyError(withDetails(Code.ResourceExhausted, E.RATE_LIMITED, { "retry-after": "12" }));
    expect(hinted.retryAfterSeconds).toBe(12);
    expect(toProxyError(withDetails(Code.ResourceExhausted, E.RATE_LIMITED)).retryAfterSeconds).toBeUndefined();
    const quota = toProxyError(new ConnectError("x", Code.ResourceExhausted, { "retry-after": "3600" }));
    expect(quota.retryAfterSeconds).toBe(3600);
    expect(quota.message).toMatch(/It resets at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in 1 h\)/);
    const quotaWithoutHint = toProxyError(new ConnectError("x", Code.ResourceExhausted));
    expect(quotaWithoutHint.retryAfterSeconds).toBeUndefined();
    expect(quotaWithoutHint.message).toContain("did not say when it resets");
  });

  it("names the limit of a usage error and the login command on a Cursor auth failure", () => {
    expect(toProxyError(withDetails(Code.ResourceExhausted, E.FREE_USER_USAGE_LIMIT)).message).toContain(
      "free plan usage limit",
    );
    expect(toProxyError(withDetails(Code.ResourceExhausted, E.USAGE_PRICING_REQUIRED)).message).toContain(
      "usage-based pricing required",
    );
    expect(toProxyError(withDetails(Code.Unauthenticated, E.NOT_LOGGED_IN)).message).toContain("cursor-bridge login");
  });

  it("decodes ErrorDetails that arrived on the wire (base64 in the end-stream JSON, §4.1)", () => {
    const value = Buffer.from(
      toBinary(ErrorDetailsSchema, create(ErrorDetailsSchema, { error: E.PRO_USER_USAGE_LIMIT })),
    ).toString("base64");
    const fallback = new ConnectError("fallback", Code.Unknown);
    const incoming = errorFromJson(
      { code: "resource_exhausted", message: "limit", details: [{ type: "aiserver.v1.ErrorDetails", value }] },
      undefined,
      fallback,
    );
    expect(toProxyError(incoming).detail).toBe("usage_limit");
  });

  it("sets the model param on an unknown model", () => {
    expect(toProxyError(withDetails(Code.InvalidArgument, E.BAD_MODEL_NAME)).param).toBe("model");
  });

  it("walks cycles in the cause chain without looping", () => {
    const a = new Error("a") as Error & { cause?: unknown };
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(causeChain(a)).toHaveLength(2);
    expect(findNetworkErrorCode(a)).toBeUndefined();
    expect(toProxyError(a).code).toBe("internal");
  });
});
