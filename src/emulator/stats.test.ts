import { describe, expect, it } from "vitest";
import { createStatsRecorder } from "./stats.js";

describe("emulator statistics", () => {
  it("keep the newest turns' records only, and count every completed turn by usage bucket", () => {
    const stats = createStatsRecorder(10);
    for (let i = 0; i < 35; i++) {
      const turn = stats.openTurn("http2", i, { runId: `run-${i}`, headers: {} });
      turn.model = i % 5 === 0 ? "default" : "composer-1";
      // Turns 6, 13, 20, 27 and 34 fail; 0, 5, 10, 15, 20, 25 and 30 are Auto's (20 among the failed).
      stats.closeTurn(turn, i % 7 === 6 ? "error" : "completed", i);
    }
    const turns = stats.snapshot().turns;
    expect(turns.length).toBeGreaterThanOrEqual(10);
    expect(turns.length).toBeLessThanOrEqual(11);
    expect(turns.map((t) => t.runId)).toEqual(turns.map((_, i) => `run-${35 - turns.length + i}`));
    expect(stats.findRun("run-0")).toBeUndefined();
    expect(stats.findRun("run-33")?.outcome).toBe("completed");
    expect(stats.completed()).toEqual({ auto: 6, other: 24 });
    stats.reset();
    expect(stats.completed()).toEqual({ auto: 0, other: 0 });
    expect(stats.snapshot().turns).toEqual([]);
  });
});
