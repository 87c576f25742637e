/**
 * One `session/prompt`, run as an HTTP door's route runs its request: the prompt's engine request (translate.ts)
 * goes to the engine, its events go back through the translation (events.ts) on the kit's driver, and the answer is
 * kept in the session's conversation. Text and reasoning stream back as `agent_message_chunk` /
 * `agent_thought_chunk`; a `session/cancel` aborts the turn (the engine sends Cursor's CancelAction) and the prompt
 * ends `cancelled`.
 */
import type { PromptResponse, StopReason } from "@agentclientprotocol/sdk";
import type { ClientTool, SubagentStep, SurfaceExecutor } from "../../backend/types.js";
import { type ConversationMessage, type Engine, type MessagePart, requestInputEstimate } from "../../engine/index.js";
import { driveTurn } from "../kit/translate.js";
import { toRequestError } from "./errors.js";
import { AcpTranslation } from "./events.js";
import type { AcpSessionRecord } from "./session-store.js";
import type { StreamedCalls } from "./streamed-calls.js";
import { toEngineRequest } from "./translate.js";

/** What a prompt needs from its session. */
export interface PromptSession {
  record: AcpSessionRecord;
  tools: ClientTool[];
  executor: SurfaceExecutor;
  emit(update: import("@agentclientprotocol/sdk").SessionUpdate): Promise<void>;
  /** The calls shown from their streamed arguments (shared with the executor). */
  streamedCalls?: StreamedCalls;
  /** Shows a step of a subagent Cursor's task tool runs (subagents.ts). */
  onSubagent?(taskCallId: string, step: SubagentStep): Promise<void>;
}

/** Runs one prompt to its end; the conversation (partial on cancel) is appended to `session.record.messages`. */
export async function runPrompt(
  engine: Engine,
  session: PromptSession,
  parts: MessagePart[],
  signal: AbortSignal,
): Promise<PromptResponse> {
  const { record } = session;
  const messages: ConversationMessage[] = [...record.messages, { role: "user", parts }];
  const answer = new AcpTranslation();
  try {
    const request = toEngineRequest(record, messages, session.tools, session.executor);
    // The prompt's one input estimate: the engine's (a segment's estimated usage) and the answer's usage read it.
    const drive = { inputTokens: requestInputEstimate(request) };
    const turn = await engine.startTurn(request, signal, { inputEstimate: drive.inputTokens });
    await driveTurn(
      turn.events,
      answer,
      (frame) => {
        if (frame.kind === "update") return session.emit(frame.update);
        if (frame.kind === "subagent") return session.onSubagent?.(frame.taskCallId, frame.step) ?? Promise.resolve();
        // Decided when sent, not when queued: the executor may have taken the call over meanwhile.
        const update = session.streamedCalls?.show(frame.toolCallId, frame.toolName, frame.text);
        return update === undefined ? Promise.resolve() : session.emit(update);
      },
      drive,
    );
  } catch (error) {
    if (!signal.aborted) {
      // What Cursor said before failing stays in the conversation; a prompt that failed before any answer leaves none.
      if (answer.text !== "") {
        record.messages = [...messages, { role: "assistant", text: answer.text, reasoning: [], toolCalls: [] }];
      }
      throw toRequestError(error);
    }
  }
  const { text, usage } = answer;
  const stopReason: StopReason = signal.aborted ? "cancelled" : answer.stopReason;
  record.messages = [...messages, { role: "assistant", text, reasoning: [], toolCalls: [] }];
  if (usage === undefined) return { stopReason };
  const tokens = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens };
  // `usage` is the draft field of ACP's unstable schema (clients on the stable one drop it); `_meta` carries the same.
  const response = { stopReason, usage: tokens, _meta: { "cursor-bridge": { usage: tokens } } };
  return response;
}
