/**
 * Public entry of the conversation engine: the only module `server/` and the API surfaces may import from the
 * engine (enforced by .dependency-cruiser.cjs). Its conversation index is one of src/stores/.
 */
export {
  type AccountRouterOptions,
  accountIndex,
  createAccountRouter,
  unknownAccount,
} from "./accounts.js";
export { type BridgeEngine, createEngine, type EngineOptions } from "./engine.js";
export { requestInputEstimate } from "./input-estimate.js";
export type { ParkedTurnInfo } from "./parked-turns.js";
export type * from "./types.js";
