/**
 * A prompt → the engine's request: the session's conversation plus the new user message (the engine continues the
 * Cursor conversation from its checkpoint: one Run per prompt), the session's MCP tools, reasoning on, the session's
 * model, mode and model parameters, and the executor that runs Cursor's execs through the editor.
 */
import type { ClientTool, SurfaceExecutor } from "../../backend/types.js";
import type { ConversationMessage, EngineRequest } from "../../engine/index.js";
import { withChoice } from "../kit/model-choice.js";
import { choiceOf } from "./config-options.js";
import type { AcpSessionRecord } from "./session-store.js";

/** The engine request of a prompt whose conversation, ending with the new user message, is `messages`. */
export function toEngineRequest(
  record: AcpSessionRecord,
  messages: ConversationMessage[],
  tools: ClientTool[],
  executor: SurfaceExecutor,
): EngineRequest {
  return {
    model: record.model,
    instructions: [],
    messages,
    tools,
    options: { reasoning: true, reasoningEffort: undefined, toolChoice: "auto", ...withChoice(choiceOf(record)) },
    executor,
    mode: record.mode,
  };
}
