import { describe, expect, it } from "vitest";
import { expiryText, identityOf, progressBar, relativeTime, tokenCount } from "./format.js";
import { formatFields, formatTable } from "./io.js";

describe("formatters", () => {
  it("relativeTime", () => {
    expect(relativeTime(60 * 60_000, 0)).toBe("in 60 min");
    expect(relativeTime(0, 3 * 3600_000)).toBe("3 h ago");
    expect(relativeTime(5 * 24 * 3600_000, 0)).toBe("in 5 days");
    expect(relativeTime(10_000, 0)).toBe("in less than a minute");
  });

  it("tokenCount", () => {
    expect(tokenCount(200_000)).toBe("200k");
    expect(tokenCount(1_000_000)).toBe("1M");
    expect(tokenCount(512)).toBe("512");
  });

  it("progressBar clamps and rounds", () => {
    expect(progressBar(0.5, 10)).toBe("[#####-----]");
    expect(progressBar(2, 4)).toBe("[####]");
    expect(progressBar(Number.NaN, 4)).toBe("[----]");
  });

  it("identityOf prefers email, then user id", () => {
    expect(identityOf({ email: "a@b.c", userId: "user_1" })).toBe("a@b.c");
    expect(identityOf({ userId: "user_1" })).toBe("user_1");
  });

  it("expiryText", () => {
    expect(
      expiryText({ expiresAt: "2026-01-17T14:03:00.000Z", expired: false }, Date.parse("2026-01-17T13:03:00Z")),
    ).toBe("valid until 2026-01-17 14:03 UTC (in 60 min)");
    expect(
      expiryText({ expiresAt: "2026-01-17T14:03:00.000Z", expired: true }, Date.parse("2026-01-17T17:03:00Z")),
    ).toBe("expired 2026-01-17 14:03 UTC (3 h ago)");
    expect(expiryText({}, 0)).toMatch(/unknown/);
  });

  it("formatTable and formatFields align columns", () => {
    expect(formatTable(["A", "BB"], [["xxx", "y"]])).toBe("A    BB\n---  --\nxxx  y\n");
    expect(
      formatFields([
        ["a", "1"],
        ["long", "2"],
      ]),
    ).toBe("  a     1\n  long  2\n");
  });
});
