/**
 * Public entry of the conversation engine: the only module `server/` and the API surfaces may import from the
 * engine (enforced by .dependency-cruiser.cjs).
 */
export {
  type ConversationIndex,
  type ConversationIndexOptions,
  createMemoryConversationIndex,
} from "../stores/conversation-index.js";
export { createFileConversationIndex, type FileConversationIndexOptions } from "../stores/file/conversation-index.js";
export { type BridgeEngine, createEngine, type EngineOptions } from "./engine.js";
export type { ParkedTurnInfo } from "./parked-turns.js";
export type * from "./types.js";
