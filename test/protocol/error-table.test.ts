/**
 * One row per `aiserver.v1.ErrorDetails.Error` value (cursor-protocol-addendum-2.md §8 and the older references):
 * what the caller gets (status, OpenAI error code), the `x-should-retry` header without `is_retryable` and with it
 * (true and false), `Retry-After` only when Cursor says when, and a message carrying Cursor's title and detail.
 * Every value of the generated enum must have a row, so a value added to proto/ without a decision fails here.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { classifyTurnError } from "../../src/backend/turn-errors.js";
import { ErrorDetails_Error as E, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";
import {
  BY_ERROR_DETAILS,
  INFERENCE_ERROR_TYPE_HEADER,
  toProxyError,
} from "../../src/protocol/cursor/error-mapping.js";
import { toRequestError } from "../../src/surfaces/acp/errors.js";
import { toOpenAIError } from "../../src/surfaces/kit/openai-error.js";
import { toAnthropicError } from "../../src/surfaces/messages/error-body.js";
import { ProxyError } from "../../src/util/errors.js";

/** status, OpenAI `error.code`, `x-should-retry` when Cursor sends no `is_retryable`. */
type Expected = [status: number, code: string | null, retry: boolean];
const QUOTA: Expected = [429, "insufficient_quota", false];
const RATE: Expected = [429, "rate_limit_exceeded", true];
const AUTH: Expected = [401, "cursor_auth_failed", false];
const DENIED: Expected = [403, "permission_denied", false];
const OUTDATED: Expected = [502, "outdated_client", false];
const NOT_FOUND: Expected = [404, "not_found", false];
const MODEL_GONE: Expected = [404, "model_not_found", false];
const INVALID: Expected = [400, null, false];
/** Values whose Connect code decides; these rows send `unknown`. */
const BY_CODE: Expected = [503, "upstream_unavailable", true];

const TABLE: Record<keyof typeof E, Expected> = {
  UNSPECIFIED: BY_CODE,
  BAD_API_KEY: AUTH,
  NOT_LOGGED_IN: AUTH,
  INVALID_AUTH_ID: AUTH,
  NOT_HIGH_ENOUGH_PERMISSIONS: DENIED,
  BAD_MODEL_NAME: MODEL_GONE,
  USER_NOT_FOUND: AUTH,
  FREE_USER_RATE_LIMIT_EXCEEDED: RATE,
  PRO_USER_RATE_LIMIT_EXCEEDED: RATE,
  FREE_USER_USAGE_LIMIT: QUOTA,
  PRO_USER_USAGE_LIMIT: QUOTA,
  AUTH_TOKEN_NOT_FOUND: AUTH,
  AUTH_TOKEN_EXPIRED: AUTH,
  OPENAI: BY_CODE,
  OPENAI_RATE_LIMIT_EXCEEDED: RATE,
  OPENAI_ACCOUNT_LIMIT_EXCEEDED: QUOTA,
  TASK_UUID_NOT_FOUND: NOT_FOUND,
  TASK_NO_PERMISSIONS: DENIED,
  AGENT_REQUIRES_LOGIN: AUTH,
  AGENT_ENGINE_NOT_FOUND: [503, "upstream_unavailable", true],
  MAX_TOKENS: [400, "context_length_exceeded", false],
  USER_ABORTED_REQUEST: [499, "request_canceled", false],
  GENERIC_RATE_LIMIT_EXCEEDED: RATE,
  PRO_USER_ONLY: DENIED,
  API_KEY_NOT_SUPPORTED: DENIED,
  TIMEOUT: [504, "upstream_timeout", true],
  SLASH_EDIT_FILE_TOO_LONG: INVALID,
  FILE_UNSUPPORTED: INVALID,
  GPT_4_VISION_PREVIEW_RATE_LIMIT: RATE,
  // Final unless Cursor says is_retryable: true (cursor-protocol-addendum-3.md E6), whatever the Connect code.
  CUSTOM_MESSAGE: [503, "upstream_unavailable", false],
  OUTDATED_CLIENT: OUTDATED,
  CLAUDE_IMAGE_TOO_LARGE: [400, "image_too_large", false],
  GITGRAPH_NOT_FOUND: NOT_FOUND,
  FILE_NOT_FOUND: NOT_FOUND,
  API_KEY_RATE_LIMIT: RATE,
  DEBOUNCED: RATE,
  BAD_REQUEST: INVALID,
  REPOSITORY_SERVICE_REPOSITORY_IS_NOT_INITIALIZED: INVALID,
  UNAUTHORIZED: AUTH,
  NOT_FOUND: NOT_FOUND,
  DEPRECATED: OUTDATED,
  RESOURCE_EXHAUSTED: RATE,
  BAD_USER_API_KEY: AUTH,
  CONVERSATION_TOO_LONG: [400, "context_length_exceeded", false],
  USAGE_PRICING_REQUIRED: QUOTA,
  USAGE_PRICING_REQUIRED_CHANGEABLE: QUOTA,
  GITHUB_NO_USER_CREDENTIALS: DENIED,
  GITHUB_USER_NO_ACCESS: DENIED,
  GITHUB_APP_NO_ACCESS: DENIED,
  GITHUB_MULTIPLE_OWNERS: DENIED,
  RATE_LIMITED: RATE,
  RATE_LIMITED_CHANGEABLE: RATE,
  CUSTOM: BY_CODE,
  HOOKS_BLOCKED: DENIED,
  SUSPICIOUS_USAGE_BLOCKED: DENIED,
  EXTENSION_HOST_TIMEOUT: [504, "upstream_timeout", true],
  NETWORK_ERROR: [503, "upstream_unavailable", true],
  PROVIDER_ERROR: [503, "upstream_unavailable", true],
  MODEL_BLOCKED: DENIED,
  INTERNAL: [503, "upstream_unavailable", true],
  MAX_MODE_REQUIRED: [403, "model_not_available", false],
  MODEL_NO_LONGER_SUPPORTED: MODEL_GONE,
  PRICING_WARNING: QUOTA,
  SLOW_POOL: RATE,
  UNSUPPORTED_REGION: [403, "model_not_available", false],
  ACCOUNT_CLOSED: DENIED,
};

const names = Object.keys(E).filter((key) => Number.isNaN(Number(key))) as (keyof typeof E)[];

function cursorError(
  error: E,
  options: { isRetryable?: boolean; title?: string; retryAfter?: string; code?: Code } = {},
): ConnectError {
  const title = options.title ?? `Title of ${E[error]}`;
  const details = { title, detail: `Detail of ${E[error]}.`, isRetryable: options.isRetryable };
  const metadata = options.retryAfter === undefined ? undefined : { "retry-after": options.retryAfter };
  return new ConnectError("connect message", options.code ?? Code.Unknown, metadata, [
    { desc: ErrorDetailsSchema, value: { error, details } },
  ]);
}

const answer = (error: ConnectError) => toOpenAIError(toProxyError(error, { clientVersion: "cli-2020.01.01-0000000" }));

describe("every ErrorDetails.Error value has a row and a mapping", () => {
  it("the table covers the generated enum (addendum 2 §8 values 52-65 included) and the mapping does too", () => {
    expect(names.length).toBeGreaterThanOrEqual(66);
    expect(Object.keys(TABLE).sort()).toEqual([...names].sort());
    for (const name of names) expect(BY_ERROR_DETAILS.has(E[name]), name).toBe(true);
  });

  it.each(names)("%s", (name) => {
    const [status, code, retry] = TABLE[name];
    const error = E[name];
    const plain = answer(cursorError(error));
    expect(plain.status).toBe(status);
    expect(plain.body.error.code).toBe(code);
    expect(plain.headers["x-should-retry"]).toBe(String(retry));
    expect(plain.headers["Retry-After"]).toBeUndefined();
    // Cursor's title and detail both reach the caller (internal errors aside, none of these is one).
    expect(plain.body.error.message).toContain(`Title of ${name}`);
    expect(plain.body.error.message).toContain(`Detail of ${name}.`);
    // is_retryable, when sent, decides x-should-retry.
    expect(answer(cursorError(error, { isRetryable: true })).headers["x-should-retry"]).toBe("true");
    expect(answer(cursorError(error, { isRetryable: false })).headers["x-should-retry"]).toBe("false");
    // Retry-After only when Cursor says when.
    expect(answer(cursorError(error, { retryAfter: "42" })).headers["Retry-After"]).toBe("42");
  });
});

describe("titles and codes that override the enum", () => {
  it('a title "Update Required" is an outdated-client refusal whatever enum value carries it', () => {
    for (const error of [E.GPT_4_VISION_PREVIEW_RATE_LIMIT, E.RESOURCE_EXHAUSTED, E.UNSPECIFIED, E.CUSTOM]) {
      const mapped = toProxyError(cursorError(error, { title: "Update Required", code: Code.ResourceExhausted }), {
        clientVersion: "cli-2020.01.01-0000000",
      });
      expect(mapped.detail).toBe("outdated_client");
      expect(mapped.status).toBe(502);
      expect(mapped.message).toContain("Update Required");
      expect(mapped.message).toContain("--client-version / CURSOR_CLIENT_VERSION");
      expect(mapped.message).toContain("cli-2020.01.01-0000000");
    }
    // The same enum value with another title stays a rate limit.
    expect(toProxyError(cursorError(E.GPT_4_VISION_PREVIEW_RATE_LIMIT)).code).toBe("rate_limited");
  });

  it("NOT_FOUND on `internal` is a missing blob, a value that defers to the code follows it", () => {
    expect(toProxyError(cursorError(E.NOT_FOUND, { code: Code.Internal })).detail).toBe("blob_not_found");
    expect(toProxyError(cursorError(E.CUSTOM, { code: Code.Unauthenticated })).code).toBe("unauthenticated");
  });

  it("the message is the Connect message when Cursor sends neither title nor detail", () => {
    const bare = new ConnectError("plain words", Code.ResourceExhausted, undefined, [
      { desc: ErrorDetailsSchema, value: { error: E.RATE_LIMITED } },
    ]);
    expect(toProxyError(bare).message).toContain("plain words");
  });
});

/**
 * One row per error kind a client acts on differently (cursor-protocol-addendum-3.md E2–E7, T7): what each door
 * answers. The backend's part (which request makes a bare refusal an overflow) is `classifyTurnError`; the doors'
 * wording is the kit's error policy.
 */
describe("error kinds", () => {
  const turn = (error: unknown, estimatedTokens: number, outputStarted = false) =>
    classifyTurnError(toProxyError(error), { model: "claude-4.5-sonnet", estimatedTokens, outputStarted });
  const bare = () => new ConnectError("Error", Code.ResourceExhausted);

  it("context overflow: a bare resource_exhausted on a request of at least half the window", () => {
    const error = turn(bare(), 100_000);
    expect(error.code).toBe("context_length_exceeded");
    expect(error.contextLength).toEqual({ tokens: 100_000, limit: 200_000 });
    const openai = toOpenAIError(error);
    expect(openai.status).toBe(400);
    expect(openai.body.error).toMatchObject({ code: "context_length_exceeded", type: "invalid_request_error" });
    expect(openai.body.error.message).toBe(
      "This model's maximum context length is 200000 tokens. However, your messages resulted in 100000 tokens. Please reduce the length of the messages.",
    );
    expect(openai.headers["x-should-retry"]).toBe("false");
    const anthropic = toAnthropicError(error);
    expect(anthropic.status).toBe(400);
    expect(anthropic.body.error).toEqual({
      type: "invalid_request_error",
      message: "prompt is too long: 100000 tokens > 200000 maximum",
    });
    const acp = toRequestError(error);
    expect(acp.code).toBe(-32010);
    // An estimate under the window is not shown as the conversation's size (it counts only what the turn sends).
    expect(acp.message).toMatch(
      /^The conversation is too long for the model's 200000-token context window\. Start a new session or run \/compact\.$/,
    );
  });

  it("context overflow: CONVERSATION_TOO_LONG and MAX_TOKENS get the request's size whatever its size", () => {
    for (const value of [E.CONVERSATION_TOO_LONG, E.MAX_TOKENS]) {
      const error = turn(cursorError(value), 10);
      expect(error.code).toBe("context_length_exceeded");
      expect(toAnthropicError(error).body.error.message).toBe("prompt is too long: 10 tokens > 200000 maximum");
      // An editor is not told "10 tokens > 200000 maximum": the estimate misses the checkpoint's context.
      expect(toRequestError(error).message).toBe(
        "The conversation is too long for the model's 200000-token context window. Start a new session or run /compact.",
      );
    }
    const over = toRequestError(turn(cursorError(E.CONVERSATION_TOO_LONG), 250_000));
    expect(over.message).toMatch(/^The conversation is too long for the model: 250000 tokens > 200000 maximum\. /);
  });

  it("model not available: a bare resource_exhausted on a small request, UNSUPPORTED_REGION, MAX_MODE_REQUIRED", () => {
    for (const error of [turn(bare(), 99_999), turn(cursorError(E.UNSUPPORTED_REGION), 5)]) {
      const openai = toOpenAIError(error);
      expect(openai.status).toBe(403);
      expect(openai.body.error.code).toBe("model_not_available");
      expect(openai.body.error.param).toBe("model");
      expect(openai.body.error.message).toContain("The model claude-4.5-sonnet is not available");
      expect(openai.body.error.message).toContain("Pick another model");
      expect(toAnthropicError(error).body.error.type).toBe("permission_error");
      expect(toRequestError(error).code).toBe(-32013);
      expect(openai.body.error.message).toContain("(GET /v1/models lists them)");
      // An editor has no GET: ACP's text points to the session's Model option.
      expect(toRequestError(error).message).toContain("Pick another model (the session's Model option lists them).");
    }
    expect(turn(cursorError(E.MAX_MODE_REQUIRED), 5).detail).toBe("model_not_available");
  });

  it("a bare resource_exhausted after output started stays a usage-limit-class refusal", () => {
    const error = turn(bare(), 150_000, true);
    expect(error.code).toBe("quota_exceeded");
    expect(toOpenAIError(error).status).toBe(429);
  });

  it("usage limit: unchanged, and names Cursor's fallbackModel / spendLimitHit when present (E3)", () => {
    const limit = new ConnectError("limit", Code.ResourceExhausted, undefined, [
      {
        desc: ErrorDetailsSchema,
        value: {
          error: E.PRO_USER_USAGE_LIMIT,
          details: {
            title: "You've hit your usage limit",
            detail: "Upgrade or wait.",
            additionalInfo: { fallbackModel: "composer-1.5", spendLimitHit: "true" },
          },
        },
      },
    ]);
    const answer = toOpenAIError(turn(limit, 150_000));
    expect(answer.status).toBe(429);
    expect(answer.body.error.code).toBe("insufficient_quota");
    expect(answer.body.error.message).toContain("spend limit was hit");
    expect(answer.body.error.message).toContain("Cursor suggests the model composer-1.5");
    expect(toRequestError(turn(limit, 1)).message).toMatch(/^Cursor usage limit reached/);
  });

  it("upstream_truncated: 502, not retried", () => {
    const truncated = new ProxyError("backend_protocol", "Cursor ended the stream without finishing the turn.", {
      detail: "upstream_truncated",
      retryable: false,
    });
    const answer = toOpenAIError(truncated);
    expect(answer.status).toBe(502);
    expect(answer.body.error.code).toBe("upstream_truncated");
    expect(answer.headers["x-should-retry"]).toBe("false");
    expect(toRequestError(truncated).code).toBe(-32015);
  });

  it.each([
    ["CONVERSATION_TOO_LONG", "context_length_exceeded"],
    ["MAX_TOKENS", "context_length_exceeded"],
    ["UNSUPPORTED_REGION", "permission_denied"],
    ["MAX_MODE_REQUIRED", "permission_denied"],
    ["OUTDATED_CLIENT", "backend_protocol"],
    ["DEPRECATED", "backend_protocol"],
    ["MODEL_NO_LONGER_SUPPORTED", "not_found"],
    ["IMAGE_TOO_LARGE", "invalid_request"],
    ["CONTENT_POLICY", "invalid_request"],
  ])("x-cursor-inference-request-error-type %s is never retried (E6)", (value, code) => {
    for (const header of [value, `ERROR_${value}`]) {
      const error = new ConnectError("Error", Code.Unavailable, { [INFERENCE_ERROR_TYPE_HEADER]: header }, [
        {
          desc: ErrorDetailsSchema,
          value: { error: E.UNSPECIFIED, details: { title: "t", detail: "d", isRetryable: true } },
        },
      ]);
      const mapped = toProxyError(error);
      expect(mapped.code).toBe(code);
      expect(mapped.retryable).toBe(false);
      expect(toOpenAIError(mapped).headers["x-should-retry"]).toBe("false");
    }
  });

  it("is_retryable: false makes any error terminal", () => {
    expect(toProxyError(cursorError(E.PROVIDER_ERROR, { isRetryable: false })).retryable).toBe(false);
    expect(toProxyError(cursorError(E.RATE_LIMITED, { isRetryable: false })).retryable).toBe(false);
  });
});
