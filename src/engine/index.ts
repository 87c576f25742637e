/**
 * Public entry of the conversation engine: the only module `server/` and the API surfaces may import from the
 * engine (enforced by .dependency-cruiser.cjs).
 */
export {
  type ConversationIndex,
  type ConversationIndexOptions,
  createMemoryConversationIndex,
} from "./conversation-index.js";
export { type BridgeEngine, createEngine, type EngineOptions } from "./engine.js";
export { createFileConversationIndex, type FileConversationIndexOptions } from "./file-conversation-index.js";
export type { ParkedTurnInfo } from "./parked-turns.js";
export type * from "./types.js";
