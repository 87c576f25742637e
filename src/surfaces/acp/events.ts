/**
 * Engine events → ACP `session/update` notifications, on the kit's translation contract (kit/translate.ts; the
 * driver is `driveTurn`, which waits for each notification): text as `agent_message_chunk`, reasoning as
 * `agent_thought_chunk`. An MCP call's arguments as they form become an `arguments` frame with the text so far (the
 * kit hands out the pieces; streamed-calls.ts shows them); the call itself is not an event here: the session's
 * executor runs Cursor's execs through the editor and announces them (executor.ts). A failure is the prompt's JSON-RPC
 * error (errors.ts), not frames.
 */
import type { StopReason } from "@agentclientprotocol/sdk";
import type { Usage } from "../../backend/types.js";
import type { EventHandlers, Translation } from "../kit/translate.js";
import type { AcpFrame } from "./wire.js";

/** The state of one prompt's answer. */
export class AcpTranslation implements Translation<AcpFrame> {
  /** The answer's text (kept in the session's conversation). */
  text = "";
  stopReason: StopReason = "end_turn";
  usage: Usage | undefined;
  /** The argument text so far of each call whose arguments stream. */
  private readonly argumentTexts = new Map<string, string>();

  readonly on: EventHandlers<AcpFrame> = {
    "text-delta": (event, emit) => {
      this.text += event.text;
      emit({
        kind: "update",
        update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.text } },
      });
    },
    "reasoning-delta": (event, emit) => {
      emit({
        kind: "update",
        update: { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.text } },
      });
    },
    "tool-call-delta": (event, emit) => {
      const text = (this.argumentTexts.get(event.toolCallId) ?? "") + event.delta;
      this.argumentTexts.set(event.toolCallId, text);
      emit({ kind: "arguments", toolCallId: event.toolCallId, toolName: event.toolName, text });
    },
    subagent: (event, emit) => emit({ kind: "subagent", taskCallId: event.taskCallId, step: event.step }),
    usage: (event) => {
      this.usage = event.usage;
    },
    "turn-end": (event) => {
      if (event.reason === "length") this.stopReason = "max_tokens";
    },
  };

  finish(): void {}

  /** A failure answers the prompt itself (the JSON-RPC error): nothing more is sent. */
  fail(): void {}
}
