import { describe, expect, it } from "vitest";
import { ProxyError } from "../util/errors.js";
import { assertTransition, inSegment, statusOf, TURN_TRANSITIONS, type TurnPhase } from "./turn-phase.js";

const PHASES: TurnPhase[] = ["new", "opening", "streaming", "parked", "ended", "expired"];

describe("agent turn phases", () => {
  it("allows exactly the documented transitions", () => {
    const allowed = PHASES.flatMap((from) => TURN_TRANSITIONS[from].map((to) => `${from}->${to}`));
    expect(allowed.sort()).toEqual(
      [
        "new->opening",
        "new->ended",
        "opening->streaming",
        "opening->parked",
        "opening->ended",
        "streaming->parked",
        "streaming->ended",
        "parked->streaming",
        "parked->ended",
        "parked->expired",
      ].sort(),
    );
    for (const from of PHASES) {
      for (const to of PHASES) {
        if (TURN_TRANSITIONS[from].includes(to)) expect(assertTransition(from, to)).toBe(to);
        else expect(() => assertTransition(from, to)).toThrow(ProxyError);
      }
    }
  });

  it("never leaves a terminal phase, and only a parked turn can expire", () => {
    expect(TURN_TRANSITIONS.ended).toEqual([]);
    expect(TURN_TRANSITIONS.expired).toEqual([]);
    expect(PHASES.filter((from) => TURN_TRANSITIONS[from].includes("expired"))).toEqual(["parked"]);
  });

  it("maps phases onto the public status and knows when leaving must close the turn", () => {
    expect(PHASES.map(statusOf)).toEqual(["new", "streaming", "streaming", "parked", "ended", "ended"]);
    expect(PHASES.filter(inSegment)).toEqual(["opening", "streaming"]);
  });
});
