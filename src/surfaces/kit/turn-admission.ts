/**
 * The gate a turn passes once its model is known and allowed, right before it starts: the team gateway's limits
 * (src/gateway/limits) set it on the request's context for a virtual key, and reserve the turn's worst-case cost
 * and its rate-limit place there (so a key's model allow-list is checked before its budget, and a request the kit
 * refuses takes neither). Throws the refusal (429) as a ProxyError.
 */
import type { EngineRequest } from "../../engine/index.js";

/** What the gate sees of the turn. */
export interface TurnToAdmit {
  /** The Cursor model that will serve it (aliases resolved). */
  model: string;
  request: EngineRequest;
  /** The client's output cap (`max_tokens` and kin), when it sent one. */
  maxOutputTokens?: number | undefined;
  /**
   * The request's input tokens by estimate (the engine's `requestInputEstimate`), counted once per request however
   * often it is asked: the worst case reserves by it and a cut turn is billed by it.
   */
  inputTokens: () => number;
}

/** The gate; resolves when the turn may start. */
export type AdmitTurn = (turn: TurnToAdmit) => Promise<void>;
