/**
 * Client tool calls whose arguments stream before their exec (cursor-protocol-addendum-3 §2): `partial_tool_call`
 * carries the whole argument text so far (T1), `tool_call_started` or the partial itself names the MCP tool, and
 * `mcp_args` later completes the call (T3). Each snapshot becomes a `tool-call-delta` event under the id the call's
 * `tool-call` will carry, so a surface can show the arguments as they form. Native tools carry no argument text
 * (T2) and never stream. The streamed updates name a call by their envelope's `call_id`, `mcp_args` by its
 * `McpArgs.tool_call_id`, and the two need not be equal (T5, docs/protocol.md §4.6): the `McpArgs` an update carries
 * links them.
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
  /** The `tool_call_id`s of the `McpArgs` its partials and `tool_call_started` carried (T5): one, unless they change. */
  argsIds: Set<string> | undefined;
  /** The latest snapshot, and the one last handed out. */
  text: string;
  sent: string;
  /** Its `mcp_args` arrived, a completion closed it, or it was dropped: nothing more streams. */
  claimed: boolean;
}

/** Why the caller will not get a call whose arguments it saw forming as a call of their own. */
export type DropReason =
  | "the turn ended"
  | "the stream stalled"
  | "Cursor completed it without its mcp_args"
  | "its mcp_args came before it streamed";

/** Hears of the calls {@link ArgumentStreams} gives up on. */
export interface DropListener {
  argumentsDropped(toolCallId: string, reason: DropReason): void;
}

/** Shown forming: its arguments reached the caller, and neither its `mcp_args` nor a drop or completion closed it. */
function isForming(call: StreamingCall | undefined): call is StreamingCall & { toolCallId: string } {
  return call !== undefined && !call.claimed && call.toolCallId !== undefined;
}

/** The argument streams of one Run. */
export class ArgumentStreams {
  /** By the updates' envelope `call_id`. */
  private readonly calls = new Map<string, StreamingCall>();
  /**
   * The `McpArgs.tool_call_id`s of calls whose `mcp_args` came before any of their arguments reached the caller. Made
   * by the first such call: most Runs have none, and a parked turn keeps its Run's streams for minutes.
   */
  private completedFirst: Set<string> | undefined;
  /**
   * Calls whose arguments reached the caller and whose `mcp_args` has not arrived yet (nor a completion that closes
   * them): the segment must not end while one is forming, or the caller would get it half-written.
   */
  open = 0;

  /**
   * `listener` hears of every call given up on ({@link drop}): its arguments reached the caller, but it will not reach
   * the caller as a call of its own ({@link DropReason}).
   */
  constructor(
    private readonly ctx: ExecContext & { takenToolCallIds: Set<string> },
    private readonly listener?: DropListener,
  ) {}

  /**
   * A `partial_tool_call` or `tool_call_started` of an MCP call (`callId` is the envelope's): the event that shows
   * the arguments so far, if there is something new to show under a known tool name.
   */
  update(callId: string, tool: McpToolCall | undefined, argsText: string): BackendEvent | undefined {
    if (callId === "") return undefined;
    let call = this.calls.get(callId);
    if (call === undefined) {
      const claimed = this.completedFirst?.has(callId) === true;
      call = { callerName: undefined, toolCallId: undefined, argsIds: undefined, text: "", sent: "", claimed };
      this.calls.set(callId, call);
    }
    const args = tool?.args;
    if (call.callerName === undefined && args !== undefined) {
      call.callerName = this.ctx.toolNames.toCaller(args.toolName) ?? this.ctx.toolNames.toCaller(args.name);
    }
    if (args !== undefined && args.toolCallId !== "" && !call.argsIds?.has(args.toolCallId)) {
      call.argsIds ??= new Set();
      call.argsIds.add(args.toolCallId);
      // Its `mcp_args` came first (T3), under the id only this update links to the envelope's: the call went out
      // complete then, so nothing of it streams, and pieces already shown (the updates before named no id) are
      // dropped.
      if (this.completedFirst?.has(args.toolCallId) === true) {
        if (call.toolCallId === undefined) call.claimed = true;
        else this.drop(call, "its mcp_args came before it streamed");
      }
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
   * The id already handed out for the call `mcp_args` completes. Its `tool_call_id` need not equal the envelope's
   * (T5), so the call is found by either: the envelope's id, else an id inside the `McpArgs` the call's updates
   * carried; a call found so is that call, forming or not. Only when no update named the id: the oldest forming call
   * of the same tool whose updates named no id (when the `mcp_args` names none either and there is no such call, the
   * oldest forming call of the tool). Any other call still forming is left alone: calls can interleave (two
   * `tool_call_started` before either completes, T5), so its own `mcp_args` may still come (docs/protocol.md §4.6).
   */
  claim(argsToolCallId: string, callerName: string): string | undefined {
    const named = argsToolCallId !== "";
    let call = named ? this.calls.get(argsToolCallId) : undefined;
    if (named) call ??= this.find((c) => c.argsIds?.has(argsToolCallId) === true);
    // Calls whose updates named no id first, even for an mcp_args naming none: a call that named one has its own.
    call ??= this.find((c) => isForming(c) && c.callerName === callerName && c.argsIds === undefined);
    if (!named) call ??= this.find((c) => isForming(c) && c.callerName === callerName);
    if (!isForming(call)) {
      this.claimUnstreamed(argsToolCallId);
      return undefined;
    }
    this.close(call);
    return call.toolCallId;
  }

  private find(match: (call: StreamingCall) => boolean): StreamingCall | undefined {
    for (const call of this.calls.values()) if (match(call)) return call;
    return undefined;
  }

  /**
   * A call complete before any of its arguments reached the caller: `mcp_args` may come before the streamed block
   * (cursor-protocol-addendum-3 T3), and snapshots after it must not show a call that no `mcp_args` would complete,
   * whether they name it by the envelope's id or by the `McpArgs` they carry.
   */
  private claimUnstreamed(argsToolCallId: string): void {
    if (argsToolCallId === "") return;
    this.completedFirst ??= new Set();
    this.completedFirst.add(argsToolCallId);
    for (const call of this.calls.values()) {
      if (call.toolCallId === undefined && call.argsIds?.has(argsToolCallId) === true) call.claimed = true;
    }
    const own = this.calls.get(argsToolCallId);
    if (own !== undefined && own.toolCallId === undefined) own.claimed = true;
  }

  /** Drops every call still forming (the turn ended, or the segment cannot wait for them any longer). */
  dropAll(reason: DropReason): void {
    if (this.open === 0) return;
    for (const call of this.calls.values()) this.drop(call, reason);
  }

  /**
   * `tool_call_completed` for the envelope's `callId`: a call still forming is over without its `mcp_args`, so the
   * caller will not get it as a call, and pieces of it that reached the caller are dropped.
   */
  complete(callId: string): void {
    const call = this.calls.get(callId);
    if (call === undefined) return;
    this.drop(call, "Cursor completed it without its mcp_args");
    this.close(call);
  }

  /** Gives up on a call forming in front of the caller (one whose arguments never reached it is left alone). */
  private drop(call: StreamingCall, reason: DropReason): void {
    if (!isForming(call)) return;
    this.close(call);
    this.listener?.argumentsDropped(call.toolCallId, reason);
  }

  private close(call: StreamingCall): void {
    if (isForming(call)) this.open--;
    call.claimed = true;
  }
}
