import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import { assertRunTransition, RUN_TRANSITIONS, type RunPhase, runIsOver } from "./h2-run-phase.js";

const PHASES: RunPhase[] = ["opening", "requested", "responded", "ended", "failed", "unreachable"];

describe("HTTP/2 Run phases", () => {
  it("allows exactly the documented transitions", () => {
    const allowed = PHASES.flatMap((from) => RUN_TRANSITIONS[from].map((to) => `${from}->${to}`));
    expect(allowed.sort()).toEqual(
      [
        "opening->requested",
        "opening->failed",
        "opening->unreachable",
        "requested->responded",
        "requested->failed",
        "responded->ended",
        "responded->failed",
      ].sort(),
    );
    for (const from of PHASES) {
      for (const to of PHASES) {
        if (RUN_TRANSITIONS[from].includes(to)) expect(assertRunTransition(from, to)).toBe(to);
        else expect(() => assertRunTransition(from, to)).toThrow(ProxyError);
      }
    }
  });

  it("ends only after a response, and only a Run without a stream is unreachable", () => {
    expect(PHASES.filter((from) => RUN_TRANSITIONS[from].includes("ended"))).toEqual(["responded"]);
    expect(PHASES.filter((from) => RUN_TRANSITIONS[from].includes("unreachable"))).toEqual(["opening"]);
    expect(PHASES.filter(runIsOver)).toEqual(["ended", "failed", "unreachable"]);
  });
});
