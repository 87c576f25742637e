/**
 * The phases of one HTTP/2 Run (h2-run.ts) and the only transitions allowed between them. `Http2RunStream` moves
 * through them with {@link assertRunTransition}, so the outcome of a Run (and whether a failure was the connection's,
 * which is what makes `auto` fall back to HTTP/1.1) is read off one value instead of a combination of flags.
 *
 *   opening ──stream opened──▶ requested ──response headers──▶ responded ──end-of-stream frame──▶ ended
 *   opening ──the session failed, no stream──▶ unreachable
 *   opening, requested, responded ──failure / abort──▶ failed
 *
 * `opening` is the only phase in which sends are queued (there is no stream to write to yet). Not phases, because
 * they vary independently of these: the half-close of the send side (the caller may close it in any phase), the
 * flow-control pause of a full inbox, and the single-consumer guard of `messages()`.
 */
import { ProxyError } from "../../util/errors.js";

/** Where a Run is in its life. */
export type RunPhase = "opening" | "requested" | "responded" | "ended" | "failed" | "unreachable";

/** Every allowed transition; anything else is a bug. */
export const RUN_TRANSITIONS: Readonly<Record<RunPhase, readonly RunPhase[]>> = {
  opening: ["requested", "failed", "unreachable"],
  requested: ["responded", "failed"],
  responded: ["ended", "failed"],
  ended: [],
  failed: [],
  unreachable: [],
};

/** Throws `internal` for a transition the table does not allow; returns the new phase. */
export function assertRunTransition(from: RunPhase, to: RunPhase): RunPhase {
  if (!RUN_TRANSITIONS[from].includes(to)) {
    throw new ProxyError("internal", `An HTTP/2 Run cannot go from ${from} to ${to}.`);
  }
  return to;
}

/** The Run is over: nothing more is read, sent or waited for. */
export function runIsOver(phase: RunPhase): boolean {
  return RUN_TRANSITIONS[phase].length === 0;
}
