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
