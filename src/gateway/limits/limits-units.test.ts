import { describe, expect, it } from "vitest";
import { periodAt } from "./periods.js";
import { costMicroUsd, DEFAULT_PRICES, FALLBACK_PRICE, formatUsd, priceOf, priceRules } from "./prices.js";
import { openAIDuration, rateHeaders, rateSnapshot } from "./rate-headers.js";

describe("openAIDuration", () => {
  it("writes OpenAI's reset format", () => {
    expect(openAIDuration(0)).toBe("0ms");
    expect(openAIDuration(250)).toBe("250ms");
    expect(openAIDuration(1000)).toBe("1s");
    expect(openAIDuration(1500)).toBe("1.5s");
    expect(openAIDuration(60_000)).toBe("1m0s");
    expect(openAIDuration(360_000)).toBe("6m0s");
    expect(openAIDuration(3_723_000)).toBe("1h2m3s");
  });
});

describe("rate snapshot", () => {
  const now = 1_000_000;
  it("remaining, reset (newest entry leaves) and Retry-After (the entry that frees a place leaves)", () => {
    const state = {
      refused: "rpm" as const,
      requestCount: 2,
      newestRequestAt: now - 30_000,
      freeingRequestAt: now - 50_000,
      tokensUsed: 0,
      inFlight: 0,
    };
    const snapshot = rateSnapshot({ rpm: 2 }, state, now, 60_000);
    expect(snapshot.requests).toEqual({ limit: 2, remaining: 0, resetMs: 30_000 });
    expect(snapshot.retryAfterMs).toBe(10_000);
    expect(snapshot.tokens).toBeUndefined();
  });
  it("tpm: Retry-After is when enough tokens have left the window", () => {
    // Three finished requests of 40 tokens, ending 50, 20 and 10 s ago: the window empties when the newest leaves,
    // and drops under 100 once the oldest has left.
    const state = {
      refused: "tpm" as const,
      requestCount: 0,
      tokensUsed: 120,
      newestTokensAt: now - 10_000,
      freeingTokensAt: now - 50_000,
      inFlight: 0,
    };
    const snapshot = rateSnapshot({ tpm: 100 }, state, now, 60_000);
    expect(snapshot.tokens).toEqual({ limit: 100, remaining: 0, resetMs: 50_000 });
    expect(snapshot.retryAfterMs).toBe(10_000);
  });
  it("headers: OpenAI's always, Anthropic's (RFC 3339, whole seconds) on request", () => {
    const snapshot = { requests: { limit: 5, remaining: 4, resetMs: 59_500 }, retryAfterMs: 0 };
    const at = Date.parse("2026-11-26T00:00:00Z");
    expect(rateHeaders(snapshot, at, false)).toEqual({
      "x-ratelimit-limit-requests": "5",
      "x-ratelimit-remaining-requests": "4",
      "x-ratelimit-reset-requests": "59.5s",
    });
    expect(rateHeaders(snapshot, at, true)["anthropic-ratelimit-requests-reset"]).toBe("2026-11-26T00:01:00Z");
  });
});

describe("periods (UTC)", () => {
  const at = Date.parse("2026-11-26T15:30:00Z"); // a Thursday
  it("day, week from Monday, calendar month", () => {
    expect(periodAt("day", at)).toMatchObject({ id: "day:2026-11-26", end: Date.parse("2026-11-27T00:00:00Z") });
    expect(periodAt("week", at)).toMatchObject({
      id: "week:2026-11-23",
      start: Date.parse("2026-11-23T00:00:00Z"),
      end: Date.parse("2026-11-30T00:00:00Z"),
    });
    expect(periodAt("month", Date.parse("2026-12-31T23:59:59Z"))).toMatchObject({
      id: "month:2026-12",
      end: Date.parse("2027-01-01T00:00:00Z"),
    });
    expect(periodAt("week", Date.parse("2026-11-23T00:00:00Z")).id).toBe("week:2026-11-23");
  });
  it("times asked in any order each get their own period, up to the last millisecond of each", () => {
    const midnight = Date.parse("2026-11-27T00:00:00Z");
    for (const [time, id] of [
      [midnight - 1, "day:2026-11-26"],
      [midnight, "day:2026-11-27"],
      [midnight - 1, "day:2026-11-26"],
      [midnight - 86_400_000, "day:2026-11-26"],
      [midnight - 86_400_001, "day:2026-11-25"],
      [midnight + 86_399_999, "day:2026-11-27"],
    ] as const) {
      expect(periodAt("day", time).id).toBe(id);
    }
    expect(periodAt("month", Date.parse("2026-11-30T23:59:59.999Z")).id).toBe("month:2026-11");
    expect(periodAt("month", Date.parse("2026-12-01T00:00:00Z")).id).toBe("month:2026-12");
    expect(periodAt("month", Date.parse("2026-11-01T00:00:00Z")).id).toBe("month:2026-11");
    expect(periodAt("month", Date.parse("2026-10-31T23:59:59.999Z")).id).toBe("month:2026-10");
  });
});

describe("prices", () => {
  it("first matching pattern wins; config rules come first; unknown models fall back", () => {
    expect(priceOf("claude-4.6-opus-high-thinking", DEFAULT_PRICES)).toEqual({
      input: 5,
      cachedInput: 0.5,
      output: 25,
    });
    expect(priceOf("composer-2-fast", DEFAULT_PRICES).input).toBe(1.5);
    expect(priceOf("composer-2", DEFAULT_PRICES).input).toBe(0.5);
    expect(priceOf("something-new", DEFAULT_PRICES)).toEqual(FALLBACK_PRICE);
    const rules = priceRules({ "claude-*": { input: 1, cachedInput: 1, output: 1 } });
    expect(priceOf("claude-4.5-sonnet", rules)).toEqual({ input: 1, cachedInput: 1, output: 1 });
  });
  it("cost: uncached input, cache reads and output at their prices, in whole micro-dollars", () => {
    const usage = { inputTokens: 46, cacheReadTokens: 40, outputTokens: 12, totalTokens: 58 };
    // 6 × 3.5 + 40 × 0.35 + 12 × 17.5 = 245 µ$
    expect(costMicroUsd(usage, { input: 3.5, cachedInput: 0.35, output: 17.5 })).toBe(245);
    expect(costMicroUsd(undefined, FALLBACK_PRICE)).toBe(0);
    expect(formatUsd(245)).toBe("0.000245");
    expect(formatUsd(12_345_678)).toBe("12.345678");
  });
});
