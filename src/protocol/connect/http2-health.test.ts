import { describe, expect, it } from "vitest";
import { Http2Health } from "./http2-health.js";

describe("Http2Health", () => {
  const make = () => {
    const clock = { now: 0 };
    return { clock, health: new Http2Health({ initialMs: 1_000, maxMs: 4_000 }, () => clock.now) };
  };

  it("keeps trying HTTP/2 after one failure and pauses after two in a row, doubling up to the maximum", () => {
    const { clock, health } = make();
    expect(health.failed(health.begin())).toBe(0);
    expect(health.shouldTry()).toBe(true);
    expect(health.failed(health.begin())).toBe(1_000);
    expect(health.shouldTry()).toBe(false);
    clock.now += 1_000;
    expect(health.shouldTry()).toBe(true);
    expect(health.failed(health.begin())).toBe(2_000);
    clock.now += 2_000;
    expect(health.failed(health.begin())).toBe(4_000);
    clock.now += 4_000;
    expect(health.failed(health.begin())).toBe(4_000);
  });

  it("forgets failures after a success", () => {
    const { health } = make();
    health.failed(health.begin());
    health.succeeded();
    expect(health.failed(health.begin())).toBe(0);
    expect(health.shouldTry()).toBe(true);
  });

  it("counts concurrent attempts that failed together once", () => {
    const { health } = make();
    const attempts = Array.from({ length: 30 }, () => health.begin());
    for (const attempt of attempts) expect(health.failed(attempt)).toBe(0);
    expect(health.shouldTry()).toBe(true);
    expect(health.failed(health.begin())).toBe(1_000);
  });

  it("ignores a failure of an attempt that began before a success", () => {
    const { health } = make();
    const early = health.begin();
    health.failed(health.begin());
    health.succeeded();
    health.failed(early);
    expect(health.failed(health.begin())).toBe(0);
  });
});
