import { afterEach, describe, expect, it, vi } from "vitest";
import type { BackendEvent } from "../../backend/types.js";
import { ProxyError } from "../../util/errors.js";
import type { PullBodyOptions } from "../../util/pull-body.js";
import { streamTurn } from "../kit/translate.js";
import { toAnthropicError } from "./error-body.js";
import { messagesTranslation, messagesWire } from "./events.js";

afterEach(() => {
  vi.useRealTimers();
});

/** The Messages body of these engine events, as the door streams it. */
function body(events: AsyncIterable<BackendEvent>, pingIntervalMs: number, callbacks: PullBodyOptions = {}) {
  const translation = messagesTranslation({ id: "msg_1", model: "m", reasoning: false, sign: () => "s" });
  return streamTurn(events, translation, messagesWire(pingIntervalMs), { callbacks });
}

describe("the Messages stream on the kit's driver", () => {
  it("writes a ping while the turn is silent, then the pending event", async () => {
    vi.useFakeTimers();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* events(): AsyncGenerator<BackendEvent> {
      yield { type: "text-delta", text: "a" };
      await gate;
      yield { type: "turn-end", reason: "stop" };
    }
    const reader = body(events(), 5000).getReader();
    const decoder = new TextDecoder();
    const read = async () => decoder.decode((await reader.read()).value);
    expect(await read()).toMatch(/^event: message_start\n/);
    expect(await read()).toMatch(/^event: content_block_start\n/);
    expect(await read()).toMatch(/^event: content_block_delta\n/);
    const pending = read();
    await vi.advanceTimersByTimeAsync(5000);
    expect(await pending).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    const next = read();
    release();
    expect(await next).toBe('event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n');
    expect(await read()).toMatch(/^event: message_delta\n/);
    expect(await read()).toMatch(/^event: message_stop\n/);
    expect((await reader.read()).done).toBe(true);
  });

  it("ends with one error event after a failure and calls the hooks once", async () => {
    async function* events(): AsyncGenerator<BackendEvent> {
      yield { type: "text-delta", text: "a" };
      throw new ProxyError("rate_limited", "Slow down.");
    }
    const onError = vi.fn();
    const onEnd = vi.fn();
    const text = await new Response(body(events(), 0, { onError, onEnd })).text();
    expect(
      text.endsWith(
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n' +
          'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Slow down."}}\n\n',
      ),
    ).toBe(true);
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onEnd).toHaveBeenCalledTimes(1);
  });

  it("releases the source when the reader cancels", async () => {
    let released = false;
    async function* events(): AsyncGenerator<BackendEvent> {
      try {
        yield { type: "text-delta", text: "a" };
        yield { type: "text-delta", text: "b" };
      } finally {
        released = true;
      }
    }
    const onCancel = vi.fn();
    const reader = body(events(), 0, { onCancel }).getReader();
    await reader.read();
    await reader.read();
    await reader.cancel("gone");
    expect(onCancel).toHaveBeenCalledWith("gone");
    expect(released).toBe(true);
  });
});

describe("toAnthropicError", () => {
  it.each([
    [new ProxyError("invalid_request", "bad"), 400, "invalid_request_error"],
    [new ProxyError("unauthenticated", "no key", { detail: "local_api_key" }), 401, "authentication_error"],
    [new ProxyError("permission_denied", "no"), 403, "permission_error"],
    [new ProxyError("not_found", "gone"), 404, "not_found_error"],
    [new ProxyError("invalid_request", "big", { status: 413 }), 413, "request_too_large"],
    [new ProxyError("rate_limited", "slow"), 429, "rate_limit_error"],
    [new ProxyError("quota_exceeded", "limit"), 429, "rate_limit_error"],
    [new ProxyError("internal", "boom"), 500, "api_error"],
    [new ProxyError("backend_protocol", "odd"), 502, "api_error"],
    [new ProxyError("backend_unavailable", "down"), 503, "overloaded_error"],
    [new ProxyError("backend_unavailable", "busy", { status: 529 }), 529, "overloaded_error"],
  ])("%s → %i %s", (error, status, type) => {
    const response = toAnthropicError(error);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ type: "error", error: { type, message: expect.any(String) } });
  });

  it("never echoes a foreign error and tells the SDK not to retry what cannot succeed", () => {
    const response = toAnthropicError(new Error("secret internals at /home/x"));
    expect(response.body.error.message).toBe("Internal server error.");
    expect(toAnthropicError(new ProxyError("quota_exceeded", "limit")).headers["x-should-retry"]).toBe("false");
    const limited = toAnthropicError(new ProxyError("rate_limited", "slow", { retryAfterSeconds: 2.5 }));
    // x-should-retry means the same on every door: "true" when a retry can help, "false" when it cannot.
    expect(limited.headers).toEqual({ "Retry-After": "3", "x-should-retry": "true" });
  });

  it("adds the login hint to upstream authentication failures only", () => {
    expect(toAnthropicError(new ProxyError("unauthenticated", "Token expired.")).body.error.message).toContain(
      "cursor-bridge login",
    );
    const local = toAnthropicError(new ProxyError("unauthenticated", "Invalid API key.", { detail: "local_api_key" }));
    expect(local.body.error.message).toBe("Invalid API key.");
  });
});
