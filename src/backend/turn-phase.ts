/**
 * The phases of one agent turn and the only transitions allowed between them. `CursorAgentTurn` moves through them
 * with {@link assertTransition}, so a hidden combination of flags can no longer put a turn in an impossible state.
 *
 *   new ──stream()──▶ opening ──first output yielded──▶ streaming
 *   opening, streaming ──turn-end tool-calls──▶ parked ──resume()──▶ streaming
 *   opening, streaming ──turn-end stop / failure / close──▶ ended
 *   parked ──close("expired") by the parked-turn registry's TTL──▶ expired      parked ──close()──▶ ended
 *   new ──close()──▶ ended
 *
 * `opening` is the first segment before any output was yielded (events held back for a caller that answers in one
 * piece do not count): only there may a failed Run be retried or rebuilt, because the caller has seen nothing yet.
 * `expired` differs from `ended` only in the error a late `resume()` gets.
 */
import { ProxyError } from "../util/errors.js";
import type { AgentTurnStatus } from "./types.js";

/** Where a turn is in its life. */
export type TurnPhase = "new" | "opening" | "streaming" | "parked" | "ended" | "expired";

/** Every allowed transition; anything else is a bug. */
export const TURN_TRANSITIONS: Readonly<Record<TurnPhase, readonly TurnPhase[]>> = {
  new: ["opening", "ended"],
  opening: ["streaming", "parked", "ended"],
  streaming: ["parked", "ended"],
  parked: ["streaming", "ended", "expired"],
  ended: [],
  expired: [],
};

/** Throws `internal` for a transition the table does not allow; returns the new phase. */
export function assertTransition(from: TurnPhase, to: TurnPhase): TurnPhase {
  if (!TURN_TRANSITIONS[from].includes(to)) {
    throw new ProxyError("internal", `An agent turn cannot go from ${from} to ${to}.`);
  }
  return to;
}

/** The phase as callers see it ({@link AgentTurnStatus}). */
export function statusOf(phase: TurnPhase): AgentTurnStatus {
  if (phase === "opening") return "streaming";
  if (phase === "expired") return "ended";
  return phase;
}

/** Still inside a segment: leaving it now (error, abandoned iteration) must close the turn. */
export function inSegment(phase: TurnPhase): boolean {
  return phase === "opening" || phase === "streaming";
}
