import { describe, expect, it } from "vitest";
import { humanDuration } from "./duration.js";

describe("humanDuration", () => {
  it("writes waits as people read them", () => {
    expect(humanDuration(0)).toBe("in 1 s");
    expect(humanDuration(40_000)).toBe("in 40 s");
    expect(humanDuration(200_000)).toBe("in 3 min 20 s");
    expect(humanDuration(180_000)).toBe("in 3 min");
    expect(humanDuration(40_607_000)).toBe("in 11 h 17 min");
    expect(humanDuration(3_600_000)).toBe("in 1 h");
    expect(humanDuration(2 * 86_400_000 + 4 * 3_600_000)).toBe("in 2 d 4 h");
  });
});
