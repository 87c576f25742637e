import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import type { FetchLike } from "./http.js";
import { officialPollDelayMs, type PollProgress, pollForLogin } from "./login-poll.js";

type Reply = number | { status: number; body: unknown } | Error;

function fakeFetch(replies: Reply[], fallback: Reply = 404) {
  const urls: string[] = [];
  const fetch: FetchLike = async (url) => {
    urls.push(url);
    const reply = replies.shift() ?? fallback;
    if (reply instanceof Error) throw reply;
    if (typeof reply === "number") return new Response(null, { status: reply });
    return Response.json(reply.body, { status: reply.status });
  };
  return { fetch, urls };
}

function fakeClock() {
  let time = 0;
  const sleeps: number[] = [];
  return {
    now: () => time,
    sleeps,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      time += ms;
    },
  };
}

const tokens = { accessToken: "access-secret-1", refreshToken: "refresh-secret-1" };
const base = { apiUrl: "https://api.test/", uuid: "u-1", verifier: "verifier-secret" };

describe("officialPollDelayMs", () => {
  it("grows by 1.2 and caps at 10 s", () => {
    expect(officialPollDelayMs(0)).toBe(1000);
    expect(officialPollDelayMs(1)).toBe(1200);
    expect(officialPollDelayMs(2)).toBeCloseTo(1440);
    expect(officialPollDelayMs(12)).toBeCloseTo(8916.1, 0);
    expect(officialPollDelayMs(13)).toBe(10_000);
    expect(officialPollDelayMs(149)).toBe(10_000);
  });
});

describe("pollForLogin", () => {
  it("treats 404 as pending, reports progress and returns the tokens", async () => {
    const { fetch, urls } = fakeFetch([
      404,
      404,
      { status: 200, body: { ...tokens, authId: "auth0|user_1", uuid: "u-1" } },
    ]);
    const clock = fakeClock();
    const progress: PollProgress[] = [];
    const result = await pollForLogin({ ...base, fetch, ...clock, onProgress: (p) => progress.push(p) });
    expect(result).toEqual({ ...tokens, authId: "auth0|user_1" });
    expect(urls[0]).toBe("https://api.test/auth/poll?uuid=u-1&verifier=verifier-secret");
    expect(urls).toHaveLength(3);
    expect(clock.sleeps).toEqual([1000, 1200]);
    expect(progress).toEqual([
      { attempt: 0, elapsedMs: 0 },
      { attempt: 1, elapsedMs: 1000 },
    ]);
  });

  it("follows the official schedule and times out after 150 attempts", async () => {
    const { fetch, urls } = fakeFetch([]);
    const clock = fakeClock();
    const error = await pollForLogin({ ...base, fetch, ...clock }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProxyError);
    expect((error as ProxyError).code).toBe("timeout");
    expect((error as ProxyError).message).toMatch(/not approved.*cursor-bridge login/);
    expect(urls).toHaveLength(150);
    expect(clock.sleeps).toHaveLength(149);
    expect(clock.sleeps.slice(0, 14).map(Math.round)).toEqual(
      Array.from({ length: 14 }, (_, i) => Math.round(Math.min(1000 * 1.2 ** i, 10_000))),
    );
    expect(clock.sleeps.at(-1)).toBe(10_000);
  });

  it("gives up after 3 consecutive non-404 errors", async () => {
    const { fetch, urls } = fakeFetch([500, new TypeError("fetch failed"), 502]);
    const error = await pollForLogin({ ...base, fetch, ...fakeClock() }).catch((e: unknown) => e);
    expect(urls).toHaveLength(3);
    expect((error as ProxyError).code).toBe("backend_unavailable");
    expect((error as ProxyError).message).toMatch(/3 consecutive errors.*HTTP 502/);
  });

  it("resets the error count on a pending answer", async () => {
    const { fetch, urls } = fakeFetch([500, 500, 404, 500, 500, { status: 200, body: tokens }]);
    await expect(pollForLogin({ ...base, fetch, ...fakeClock() })).resolves.toEqual(tokens);
    expect(urls).toHaveLength(6);
  });

  it("counts a 200 without tokens as an error and never echoes the body", async () => {
    const bad = { status: 200, body: { accessToken: "leaked-token-value" } };
    const { fetch } = fakeFetch([bad, bad, bad]);
    const error = (await pollForLogin({ ...base, fetch, ...fakeClock() }).catch((e: unknown) => e)) as ProxyError;
    expect(error.code).toBe("backend_protocol");
    expect(error.message).not.toContain("leaked-token-value");
    expect(error.message).not.toContain("verifier-secret");
  });

  it("stops with canceled when the signal aborts during a sleep", async () => {
    const controller = new AbortController();
    const { fetch, urls } = fakeFetch([]);
    const sleep = async (_ms: number, signal: AbortSignal | undefined) => {
      controller.abort();
      throw signal?.reason;
    };
    const error = await pollForLogin({ ...base, fetch, sleep, signal: controller.signal }).catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("canceled");
    expect(urls).toHaveLength(1);
  });

  it("does not start when already aborted", async () => {
    const { fetch, urls } = fakeFetch([]);
    const error = await pollForLogin({ ...base, fetch, signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((error as ProxyError).code).toBe("canceled");
    expect(urls).toHaveLength(0);
  });
});
