/**
 * Client tool calls whose arguments stream before their exec (cursor-protocol-addendum-3 §2): `partial_tool_call`
 * carries the whole argument text so far (T1), `tool_call_started` or the partial itself names the MCP tool, and
 * `mcp_args` later completes the call (T3). Each snapshot becomes a `tool-call-delta` event under the id the call's
 * `tool-call` will carry, so a surface can show the arguments as they form. Native tools carry no argument text
 * (T2) and never stream.
 */
import type { McpToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import type { ExecContext } from "./exec-handler.js";
import { sanitizeToolCallId } from "./tool-names.js";
import type { BackendEvent } from "./types.js";

interface StreamingCall {
  /** The caller's name of the tool, once known. */
  callerName: string | undefined;
  /** The id handed out with the first event. */
  toolCallId: string | undefined;
  /** The latest snapshot, and the one last handed out. */
  text: string;
  sent: string;
  /** Its `mcp_args` arrived: nothing more streams. */
  claimed: boolean;
}

/** The argument streams of one Run. */
export class ArgumentStreams {
  private readonly calls = new Map<string, StreamingCall>();
  /**
   * Calls whose arguments reached the caller and whose `mcp_args` has not arrived yet (nor a completion that closes
   * them): the segment must not end while one is forming, or the caller would get it half-written.
   */
  open = 0;

  constructor(private readonly ctx: ExecContext & { takenToolCallIds: Set<string> }) {}

  /**
   * A `partial_tool_call` or `tool_call_started` of an MCP call (`callId` is the envelope's): the event that shows
   * the arguments so far, if there is something new to show under a known tool name.
   */
  update(callId: string, tool: McpToolCall | undefined, argsText: string): BackendEvent | undefined {
    if (callId === "") return undefined;
    let call = this.calls.get(callId);
    if (call === undefined) {
      call = { callerName: undefined, toolCallId: undefined, text: "", sent: "", claimed: false };
      this.calls.set(callId, call);
    }
    const args = tool?.args;
    if (call.callerName === undefined && args !== undefined) {
      call.callerName = this.ctx.toolNames.toCaller(args.toolName) ?? this.ctx.toolNames.toCaller(args.name);
    }
    if (argsText !== "") call.text = argsText;
    if (call.claimed || call.callerName === undefined || call.text === "" || call.text === call.sent) return undefined;
    if (call.toolCallId === undefined) {
      const { newHex, takenToolCallIds, toolCallIdSuffix } = this.ctx;
      call.toolCallId = sanitizeToolCallId(callId, newHex, takenToolCallIds, toolCallIdSuffix);
      takenToolCallIds.add(call.toolCallId);
      this.open++;
    }
    call.sent = call.text;
    return {
      type: "tool-call-delta",
      toolCallId: call.toolCallId,
      toolName: call.callerName,
      argumentsText: call.text,
    };
  }

  /**
   * The id already handed out for the call `mcp_args` completes: found by its `tool_call_id`, else (that id need not
   * equal the envelope's, T5) the oldest streaming call of the same tool.
   */
  claim(argsToolCallId: string, callerName: string): string | undefined {
    let call = this.calls.get(argsToolCallId);
    if (call?.toolCallId === undefined || call.claimed) {
      call = [...this.calls.values()].find(
        (c) => !c.claimed && c.toolCallId !== undefined && c.callerName === callerName,
      );
    }
    if (call === undefined) return undefined;
    this.close(call);
    return call.toolCallId;
  }

  /** `tool_call_completed` for the envelope's `callId`: a call still streaming is over without its `mcp_args`. */
  complete(callId: string): void {
    const call = this.calls.get(callId);
    if (call !== undefined) this.close(call);
  }

  private close(call: StreamingCall): void {
    if (!call.claimed && call.toolCallId !== undefined) this.open--;
    call.claimed = true;
  }
}
