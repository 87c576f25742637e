/**
 * The server messages of a turn that calls a client tool (docs/protocol.md §4.6, §5.2): `tool_requests_listed`, the
 * `partial_tool_call` snapshots of the arguments (usually several per call), `tool_call_started` and the
 * `exec_server_message` carrying the call's `mcp_args`. Like streaming-decode.ts and turn-decode.ts, and with the same
 * proto-reader.ts, this reads exactly their usual wire layouts without reflection and builds the same plain objects
 * `fromBinary` would; any other byte (another field, a field out of order or twice, an unknown field, a `ToolCall`
 * case other than `mcp_tool_call`, an `McpToolCall` with a result, a map key twice, a varint too long for the fields
 * read here) returns undefined and the caller decodes with `fromBinary`, so results and errors stay the library's.
 * A parked tool request decoded about 50 KB of reflection objects for these messages.
 */
import type { AgentServerMessage } from "../../gen/agent/v1/agent_pb.js";
import type {
  InteractionUpdate,
  PartialToolCallUpdate,
  ToolCallStartedUpdate,
} from "../../gen/agent/v1/interaction_pb.js";
import type { McpArgs } from "../../gen/agent/v1/mcp_pb.js";
import type { McpToolCall, ToolCall } from "../../gen/agent/v1/tool_calls_pb.js";
import { ProtoReader } from "./proto-reader.js";
import { execServerMessage } from "./turn-decode.js";

/** Varints read here are ids, counts and lengths: at most five bytes (a uint32); a longer one is left to `fromBinary`. */
const VARINT_BYTES = 5;

const EMPTY: Uint8Array = new Uint8Array(0);

/**
 * `McpArgs` from the reader's position to `end`: name (1), the argument map (2, each entry its key then its value),
 * tool_call_id (3), provider_identifier (4), tool_name (5), in that order; undefined for any other layout.
 */
function mcpArgs(r: ProtoReader, end: number): McpArgs | undefined {
  const name = r.optionalString(0x0a, end);
  if (name === undefined) return undefined;
  const args: Record<string, Uint8Array> = {};
  while (r.next(0x12, end)) {
    const entryEnd = r.lengthEnd(end);
    if (entryEnd < 0) return undefined;
    const key = r.optionalString(0x0a, entryEnd);
    if (key === undefined) return undefined;
    let value: Uint8Array | undefined = EMPTY;
    if (r.next(0x12, entryEnd)) {
      value = r.field(entryEnd);
      if (value === undefined) return undefined;
    }
    // A key twice (fromBinary keeps the last) and `__proto__` (an accessor on a plain object) are left to fromBinary.
    if (r.at !== entryEnd || key === "__proto__" || Object.hasOwn(args, key)) return undefined;
    args[key] = value;
  }
  const toolCallId = r.optionalString(0x1a, end);
  if (toolCallId === undefined) return undefined;
  const providerIdentifier = r.optionalString(0x22, end);
  if (providerIdentifier === undefined) return undefined;
  const toolName = r.optionalString(0x2a, end);
  if (toolName === undefined || r.at !== end) return undefined;
  return { $typeName: "agent.v1.McpArgs", name, args, toolCallId, providerIdentifier, toolName };
}

/**
 * A `ToolCall` from the reader's position to `end`: empty (no case), or nothing but `mcp_tool_call` (15) holding at
 * most its `args`; undefined for any other layout.
 */
function toolCall(r: ProtoReader, end: number): ToolCall | undefined {
  if (r.at === end) return { $typeName: "agent.v1.ToolCall", tool: { case: undefined }, toolCallId: "" };
  if (!r.next(0x7a, end) || r.lengthEnd(end) !== end) return undefined;
  const value: McpToolCall = { $typeName: "agent.v1.McpToolCall" };
  if (r.next(0x0a, end)) {
    if (r.lengthEnd(end) !== end) return undefined;
    const args = mcpArgs(r, end);
    if (args === undefined) return undefined;
    value.args = args;
  }
  if (r.at !== end) return undefined;
  return { $typeName: "agent.v1.ToolCall", tool: { case: "mcpToolCall", value }, toolCallId: "" };
}

/** The `tool_call` (2) of a partial or started update if it comes next; null when absent, undefined when not read. */
function toolCallField(r: ProtoReader, end: number): ToolCall | null | undefined {
  if (!r.next(0x12, end)) return null;
  const valueEnd = r.lengthEnd(end);
  return valueEnd < 0 ? undefined : toolCall(r, valueEnd);
}

/** `PartialToolCallUpdate` (7): call_id (1), tool_call (2), args_text_delta (3), model_call_id (4). */
function partialToolCall(r: ProtoReader, end: number): InteractionUpdate["message"] | undefined {
  const callId = r.optionalString(0x0a, end);
  if (callId === undefined) return undefined;
  const call = toolCallField(r, end);
  if (call === undefined) return undefined;
  const argsTextDelta = r.optionalString(0x1a, end);
  if (argsTextDelta === undefined) return undefined;
  const modelCallId = r.optionalString(0x22, end);
  if (modelCallId === undefined || r.at !== end) return undefined;
  const value: PartialToolCallUpdate = {
    $typeName: "agent.v1.PartialToolCallUpdate",
    callId,
    argsTextDelta,
    modelCallId,
  };
  if (call !== null) value.toolCall = call;
  return { case: "partialToolCall", value };
}

/** `ToolCallStartedUpdate` (2): call_id (1), tool_call (2), model_call_id (3). */
function toolCallStarted(r: ProtoReader, end: number): InteractionUpdate["message"] | undefined {
  const callId = r.optionalString(0x0a, end);
  if (callId === undefined) return undefined;
  const call = toolCallField(r, end);
  if (call === undefined) return undefined;
  const modelCallId = r.optionalString(0x1a, end);
  if (modelCallId === undefined || r.at !== end) return undefined;
  const value: ToolCallStartedUpdate = { $typeName: "agent.v1.ToolCallStartedUpdate", callId, modelCallId };
  if (call !== null) value.toolCall = call;
  return { case: "toolCallStarted", value };
}

/** `ToolRequestsListedUpdate` (27): its call_count (1, a uint32). */
function toolRequestsListed(r: ProtoReader, end: number): InteractionUpdate["message"] | undefined {
  const callCount = r.optionalUint32(0x08, end);
  if (callCount < 0 || r.at !== end) return undefined;
  return { case: "toolRequestsListed", value: { $typeName: "agent.v1.ToolRequestsListedUpdate", callCount } };
}

/** `InteractionUpdate` (field 1) holding nothing but one of the three updates above. */
function interactionUpdate(r: ProtoReader, end: number): AgentServerMessage | undefined {
  const tag = r.byte();
  let read: typeof partialToolCall;
  if (tag === 0x3a) read = partialToolCall;
  else if (tag === 0x12) read = toolCallStarted;
  else if (tag === 0xda && r.byte() === 0x01) read = toolRequestsListed;
  else return undefined;
  if (r.lengthEnd(end) !== end) return undefined;
  const message = read(r, end);
  if (message === undefined) return undefined;
  return {
    $typeName: "agent.v1.AgentServerMessage",
    message: { case: "interactionUpdate", value: { $typeName: "agent.v1.InteractionUpdate", message } },
  };
}

/** `ExecServerMessage` (field 2): its id (1), `mcp_args` (11) and exec id (15). */
function execMcpArgs(r: ProtoReader, end: number): AgentServerMessage | undefined {
  const id = r.optionalUint32(0x08, end);
  if (id < 0 || !r.next(0x5a, end)) return undefined;
  const argsEnd = r.lengthEnd(end);
  if (argsEnd < 0) return undefined;
  const args = mcpArgs(r, argsEnd);
  if (args === undefined) return undefined;
  const execId = r.optionalString(0x7a, end);
  if (execId === undefined || r.at !== end) return undefined;
  return execServerMessage(id, { case: "mcpArgs", value: args }, execId);
}

/**
 * `data` decoded when it is one of the layouts above, exactly as `fromBinary(AgentServerMessageSchema)` would decode
 * it; undefined otherwise.
 */
export function decodeToolMessage(data: Uint8Array): AgentServerMessage | undefined {
  const tag = data[0];
  if (tag !== 0x0a && tag !== 0x12) return undefined;
  const end = data.length;
  const r = new ProtoReader(data, 1, VARINT_BYTES);
  // AgentServerMessage holds nothing but its one case.
  if (r.lengthEnd(end) !== end) return undefined;
  return tag === 0x0a ? interactionUpdate(r, end) : execMcpArgs(r, end);
}
