import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { LOCAL_API_KEY_DETAIL, toOpenAIError } from "./openai-error.js";

describe("toOpenAIError status table", () => {
  const cases: Array<[string, ProxyError, number, string, string | null]> = [
    [
      "invalid request",
      new ProxyError("invalid_request", "bad", { param: "model" }),
      400,
      "invalid_request_error",
      null,
    ],
    ["too large", new ProxyError("request_too_large", "big"), 413, "invalid_request_error", "request_too_large"],
    [
      "context length",
      new ProxyError("context_length_exceeded", "long"),
      400,
      "invalid_request_error",
      "context_length_exceeded",
    ],
    [
      "unsupported media type",
      new ProxyError("unsupported_media_type", "json please"),
      415,
      "invalid_request_error",
      "unsupported_media_type",
    ],
    ["cursor auth", new ProxyError("unauthenticated", "no token"), 401, "authentication_error", "cursor_auth_failed"],
    [
      "shared store down (docs/team.md: store_unavailable)",
      new ProxyError("backend_unavailable", "store down", { detail: "store_unavailable", retryAfterSeconds: 1 }),
      503,
      "server_error",
      "store_unavailable",
    ],
    [
      "local api key",
      new ProxyError("unauthenticated", "wrong key", { detail: LOCAL_API_KEY_DETAIL }),
      401,
      "authentication_error",
      "invalid_api_key",
    ],
    ["permission", new ProxyError("permission_denied", "no"), 403, "permission_error", "permission_denied"],
    [
      "blob not found after recovery",
      new ProxyError("backend_protocol", "state gone", { detail: "blob_not_found" }),
      502,
      "server_error",
      "blob_not_found",
    ],
    [
      "model not found",
      new ProxyError("not_found", "no model", { detail: "model_not_found" }),
      404,
      "not_found_error",
      "model_not_found",
    ],
    ["not found", new ProxyError("not_found", "gone"), 404, "not_found_error", "not_found"],
    ["rate limited", new ProxyError("rate_limited", "slow"), 429, "rate_limit_error", "rate_limit_exceeded"],
    ["quota", new ProxyError("quota_exceeded", "limit"), 429, "insufficient_quota", "insufficient_quota"],
    ["upstream protocol", new ProxyError("backend_protocol", "garbled"), 502, "server_error", "upstream_error"],
    [
      "upstream unavailable",
      new ProxyError("backend_unavailable", "down"),
      503,
      "server_error",
      "upstream_unavailable",
    ],
    ["timeout", new ProxyError("timeout", "slow"), 504, "server_error", "upstream_timeout"],
  ];

  it.each(cases)("%s", (_name, error, status, type, code) => {
    const response = toOpenAIError(error);
    expect(response.status).toBe(status);
    expect(response.body.error.type).toBe(type);
    expect(response.body.error.code).toBe(code);
    expect(response.body.error.message).toContain(error.message);
  });

  it("names the param of a validation error", () => {
    const error = new ProxyError("invalid_request", "x", { param: "messages[1].role" });
    expect(toOpenAIError(error).body.error.param).toBe("messages[1].role");
    expect(toOpenAIError(new ProxyError("internal", "x")).body.error.param).toBeNull();
  });

  it("sets Retry-After only when known, rounded up to whole seconds, and x-should-retry always", () => {
    expect(toOpenAIError(new ProxyError("rate_limited", "x", { retryAfterSeconds: 2.2 })).headers).toEqual({
      "Retry-After": "3",
      "x-should-retry": "true",
    });
    expect(toOpenAIError(new ProxyError("rate_limited", "x")).headers).toEqual({ "x-should-retry": "true" });
  });

  it("answers a usage limit so SDKs do not retry it: 429 insufficient_quota, x-should-retry false", () => {
    const response = toOpenAIError(
      new ProxyError("quota_exceeded", "Cursor usage limit reached", { detail: "usage_limit" }),
    );
    expect(response.status).toBe(429);
    expect(response.headers).toEqual({ "x-should-retry": "false" });
    expect(response.body.error.code).toBe("insufficient_quota");
  });

  it("hints at cursor-bridge login for Cursor auth failures but not for the local API key", () => {
    expect(toOpenAIError(new ProxyError("unauthenticated", "Cursor rejected the token.")).body.error.message).toBe(
      "Cursor rejected the token. Run `cursor-bridge login` to sign in to Cursor.",
    );
    const local = new ProxyError("unauthenticated", "Invalid API key.", { detail: LOCAL_API_KEY_DETAIL });
    expect(toOpenAIError(local).body.error.message).toBe("Invalid API key.");
  });
});

describe("toOpenAIError never leaks internals", () => {
  it("turns foreign errors into a generic 500 without their message or stack", () => {
    const foreign = new Error("db password=hunter2 at /home/me/secret.ts:10");
    const response = toOpenAIError(foreign);
    expect(response.status).toBe(500);
    expect(response.body.error).toEqual({
      message: "Internal server error.",
      type: "server_error",
      param: null,
      code: "internal_error",
    });
    expect(JSON.stringify(response)).not.toContain("hunter2");
  });

  it("never echoes the message of an internal error, wrapped or not, and names the request id", () => {
    const wrapped = ProxyError.from(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(wrapped.code).toBe("internal");
    const response = toOpenAIError(wrapped, { requestId: "req-42" });
    expect(response.status).toBe(500);
    expect(response.body.error.message).toBe(
      "Internal server error (request id req-42; the server log has the details).",
    );
    expect(JSON.stringify(response)).not.toContain("Cannot read");
  });

  it("redacts tokens in ProxyError messages", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl";
    const response = toOpenAIError(new ProxyError("backend_protocol", `bad header Bearer ${jwt}`));
    expect(JSON.stringify(response)).not.toContain(jwt);
    expect(response.body.error.message).toContain("[redacted]");
  });

  it("maps aborts to 499 request_canceled", () => {
    const response = toOpenAIError(new DOMException("aborted", "AbortError"));
    expect(response.status).toBe(499);
    expect(response.body.error.code).toBe("request_canceled");
  });
});
