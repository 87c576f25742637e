/**
 * Close reasons the engine hands to an agent turn, in a module of their own so the engine can name them without
 * loading the turn's code (and with it the protocol code, which `serve` loads once it serves).
 */

/** The close reason of a parked turn whose tool results did not come in time (the turn then ends as "expired"). */
export const EXPIRED_REASON = "parked turn expired";
