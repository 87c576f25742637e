/**
 * Shared pieces of the turn-protocol tests: replies and filters built on the generated schema.
 */
import type { AgentServerMessage } from "../../../src/gen/agent/v1/agent_pb.js";
import type { ExecServerMessage } from "../../../src/gen/agent/v1/exec_pb.js";
import type { ClientMessageCase } from "./raw-client.js";

/** An `mcp_result` success answering `exec` with one text item. */
export function mcpReply(exec: ExecServerMessage, text: string): ClientMessageCase {
  return {
    case: "execClientMessage",
    value: {
      id: exec.id,
      execId: exec.execId,
      message: {
        case: "mcpResult",
        value: { result: { case: "success", value: { content: [{ content: { case: "text", value: { text } } }] } } },
      },
    },
  };
}

/** The exec requests among server messages. */
export function execMessages(messages: AgentServerMessage[]): ExecServerMessage[] {
  return messages.flatMap((m) => (m.message.case === "execServerMessage" ? [m.message.value] : []));
}

/** True for a server `interaction_update.heartbeat`. */
export function isHeartbeat(message: AgentServerMessage): boolean {
  return message.message.case === "interactionUpdate" && message.message.value.message.case === "heartbeat";
}

/** An `onMessage` hook that aborts `controller` once `count` heartbeats have arrived (proof of "no progress"). */
export function abortAfterHeartbeats(count: number, controller: AbortController): (m: AgentServerMessage) => undefined {
  let seen = 0;
  return (m) => {
    if (isHeartbeat(m) && ++seen >= count) controller.abort();
    return undefined;
  };
}
