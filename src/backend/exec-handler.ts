/**
 * Answers `exec_server_message` (docs/protocol.md §4.7, §5.1, §5.2). Every exec is answered with the same `id` and
 * `exec_id`, then `exec_client_control_message.stream_close`. Client tool calls (`mcp_args`) and native execs with
 * an equivalent caller tool become pending calls answered later from the caller's results; everything else is
 * answered at once (request context, typed rejections). Nothing is executed here: a turn with a surface executor
 * (ACP) hands every native and MCP exec to it instead (outcome `run`, surface-exec-runner.ts).
 */
import { create } from "@bufbuild/protobuf";
import { type AgentClientMessage, AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import type { ExecClientControlMessage, ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import type { McpArgs } from "../gen/agent/v1/mcp_pb.js";
import type { RequestContext } from "../gen/agent/v1/request_context_pb.js";
import { redirectNativeExec } from "./native-redirect.js";
import {
  type ExecCase,
  type ExecResultInit,
  rejectNativeExec,
  type ToolOutput,
  toNativeResult,
} from "./native-results.js";
import { buildRequestContext, type RequestContextInput } from "./request-context.js";
import { execToolCallId, toSurfaceExec } from "./surface-exec.js";
import { sanitizeToolCallId } from "./tool-names.js";
import type { BackendEvent, ClientTool, SurfaceExec, SurfaceExecutor } from "./types.js";
import { decodeArgumentsMap } from "./value-codec.js";

/** Reason sent when a native exec has no equivalent caller tool. */
export const NO_EQUIVALENT_TOOL_REASON =
  "cursor-bridge does not execute tools locally and the client declared no equivalent tool; use the declared tools.";

/** Reason sent for an exec a surface with an executor does not run (computer use, hooks, MCP resources…). */
export const NO_SURFACE_EXEC_REASON = "cursor-bridge does not run this kind of tool here.";

/** An exec waiting for the caller's tool result. */
export interface PendingCall {
  /** The id given to the caller in the `tool-call` event. */
  toolCallId: string;
  /** `ExecServerMessage.id`. */
  execId: number;
  /** `ExecServerMessage.exec_id`. */
  execIdString: string;
  /** The args' `tool_call_id` as Cursor sent it: the `call_id` of its `tool_call_*` updates (§4.6). May be empty. */
  cursorCallId: string;
  /** What the result is encoded from (see {@link PendingExec}). */
  exec: PendingExec;
}

/**
 * What a pending call's result is encoded from: a native exec's args (the result repeats some of them), and of a
 * client tool call (`mcp_args`) only that it is one. Its args (every argument as bytes, already handed to the caller
 * as the call's arguments) are not part of its result, and a parked turn would hold them until the result comes.
 */
export type PendingExec = Exclude<ExecCase, { case: "mcpArgs" }> | { case: "mcpArgs" };

/** The {@link PendingExec} of every client tool call: one object, shared. */
const MCP_EXEC: PendingExec = Object.freeze({ case: "mcpArgs" as const });

/** What to do with one exec. */
export type ExecOutcome =
  | { kind: "answered"; replies: AgentClientMessage[] }
  | { kind: "tool-call"; call: PendingCall; event: BackendEvent & { type: "tool-call" } }
  /** The turn's {@link SurfaceExecutor} runs it (surface-exec.ts). */
  | { kind: "run"; exec: SurfaceExec; toolCallId: string };

/** Everything the handler needs from the turn. */
export interface ExecContext extends RequestContextInput {
  tools: readonly ClientTool[];
  /** Tool-call ids already used in this turn (ids must be unique for the caller). */
  takenToolCallIds: ReadonlySet<string>;
  newHex: () => string;
  /** Appended to every tool-call id handed out (the instance tag when several instances share a store). */
  toolCallIdSuffix?: string | undefined;
  /** Runs native and MCP execs on the caller's side (ACP); see TurnRequest.executor. */
  executor?: SurfaceExecutor | undefined;
}

/** `exec_client_message` with the exec's ids and one result case. */
export function execReply(execId: number, execIdString: string, result: ExecResultInit): AgentClientMessage {
  return create(AgentClientMessageSchema, {
    message: { case: "execClientMessage", value: { id: execId, execId: execIdString, message: result } },
  });
}

/**
 * The answer to `request_context_args` (§5.1): `exec_client_message{id, request_context_result{success{...}},
 * exec_id}`, built as the plain object `create()` makes (plain-replies.test.ts holds them equal). Every turn sends it
 * before Cursor starts the model, so it is on the way to the first token: `create()` walked the schema of the four
 * nested messages, about 35 µs of the turn's opening under load.
 */
export function requestContextReply(
  execId: number,
  execIdString: string,
  requestContext: RequestContext,
): AgentClientMessage {
  return {
    $typeName: "agent.v1.AgentClientMessage",
    message: {
      case: "execClientMessage",
      value: {
        $typeName: "agent.v1.ExecClientMessage",
        id: execId,
        message: {
          case: "requestContextResult",
          value: {
            $typeName: "agent.v1.RequestContextResult",
            result: { case: "success", value: { $typeName: "agent.v1.RequestContextSuccess", requestContext } },
          },
        },
        execId: execIdString,
      },
    },
  };
}

/** An `exec_client_control_message` carrying `message`. */
function execControl(message: ExecClientControlMessage["message"]): AgentClientMessage {
  return {
    $typeName: "agent.v1.AgentClientMessage",
    message: {
      case: "execClientControlMessage",
      value: { $typeName: "agent.v1.ExecClientControlMessage", message },
    },
  };
}

/**
 * `exec_client_control_message.stream_close{id}` (§5.1 step 3), built as the plain object `create()` makes (every exec
 * answer, the request context's of every turn included, ends with one; plain-replies.test.ts holds them equal).
 */
export function streamClose(execId: number): AgentClientMessage {
  return execControl({ case: "streamClose", value: { $typeName: "agent.v1.ExecStreamClose", id: execId } });
}

/** `exec_client_control_message.heartbeat{id}`, sent while a result is pending (§5.1 step 3); as `streamClose`. */
export function execHeartbeat(execId: number): AgentClientMessage {
  return execControl({ case: "heartbeat", value: { $typeName: "agent.v1.ExecHeartbeat", id: execId } });
}

/**
 * `exec_client_control_message.throw{id, error}`: how current clients fail an exec (cursor-protocol-addendum-2.md
 * §6; no `stream_close` follows a throw).
 */
export function execThrow(execId: number, error: string): AgentClientMessage {
  return create(AgentClientMessageSchema, {
    message: {
      case: "execClientControlMessage",
      value: { message: { case: "throw", value: { id: execId, error } } },
    },
  });
}

/**
 * The answer to an exec of a kind this schema does not know (a newer Cursor's: its args arrive as an unknown field).
 * Every exec must be answered or the server waits for it (docs/protocol.md §5.1), and no typed result of an unknown
 * kind can be written, so the exec is failed with a `throw` naming the field.
 */
function unknownExec(message: ExecServerMessage): ExecOutcome {
  const fields = (message.$unknown ?? []).map((field) => field.no).join(", ");
  const kind = fields === "" ? "an empty exec" : `an exec of unknown kind (field ${fields})`;
  return { kind: "answered", replies: [execThrow(message.id, `cursor-bridge cannot run ${kind}.`)] };
}

function answered(message: ExecServerMessage, results: ExecResultInit[]): ExecOutcome {
  const replies = results.map((result) => execReply(message.id, message.execId, result));
  replies.push(streamClose(message.id));
  return { kind: "answered", replies };
}

/** The ids of calls whose arguments already streamed (argument-streams.ts). */
export interface StreamedCallIds {
  claim(argsToolCallId: string, callerName: string): string | undefined;
}

function mcpCall(message: ExecServerMessage, args: McpArgs, ctx: ExecContext, streamed?: StreamedCallIds): ExecOutcome {
  const callerName = ctx.toolNames.toCaller(args.toolName) ?? ctx.toolNames.toCaller(args.name);
  if (callerName === undefined) {
    const notFound = { name: args.toolName || args.name, availableTools: ctx.toolNames.entries.map(([, m]) => m) };
    return answered(message, [{ case: "mcpResult", value: { result: { case: "toolNotFound", value: notFound } } }]);
  }
  const toolCallId =
    streamed?.claim(args.toolCallId, callerName) ??
    sanitizeToolCallId(args.toolCallId, ctx.newHex, ctx.takenToolCallIds, ctx.toolCallIdSuffix);
  const call: PendingCall = {
    toolCallId,
    execId: message.id,
    execIdString: message.execId,
    cursorCallId: args.toolCallId,
    exec: MCP_EXEC,
  };
  const event = {
    type: "tool-call",
    toolCallId,
    toolName: callerName,
    arguments: decodeArgumentsMap(args.args),
  } as const;
  return { kind: "tool-call", call, event };
}

/** Decides how to answer one exec; `streamed` names the calls whose arguments already streamed. */
export function handleExec(message: ExecServerMessage, ctx: ExecContext, streamed?: StreamedCallIds): ExecOutcome {
  const exec = message.message;
  if (exec.case === undefined) return unknownExec(message);
  if (exec.case === "requestContextArgs") {
    const reply = requestContextReply(message.id, message.execId, buildRequestContext(ctx));
    return { kind: "answered", replies: [reply, streamClose(message.id)] };
  }
  if (ctx.executor !== undefined) {
    const surfaceExec = toSurfaceExec(exec, ctx.toolNames);
    if (surfaceExec === undefined) return answered(message, rejectNativeExec(exec, NO_SURFACE_EXEC_REASON));
    // An MCP call whose arguments streamed keeps the id they streamed under.
    const id =
      (surfaceExec.kind === "mcp" && exec.case === "mcpArgs"
        ? streamed?.claim(exec.value.toolCallId, surfaceExec.toolName)
        : undefined) ??
      sanitizeToolCallId(execToolCallId(exec), ctx.newHex, ctx.takenToolCallIds, ctx.toolCallIdSuffix);
    return { kind: "run", exec: surfaceExec, toolCallId: id };
  }
  if (exec.case === "mcpArgs") return mcpCall(message, exec.value, ctx, streamed);
  const redirect = redirectNativeExec(exec, ctx.tools);
  if (redirect === undefined) return answered(message, rejectNativeExec(exec, NO_EQUIVALENT_TOOL_REASON));
  const toolCallId = sanitizeToolCallId(
    redirect.nativeToolCallId,
    ctx.newHex,
    ctx.takenToolCallIds,
    ctx.toolCallIdSuffix,
  );
  const call: PendingCall = {
    toolCallId,
    execId: message.id,
    execIdString: message.execId,
    cursorCallId: redirect.nativeToolCallId,
    exec,
  };
  const event = { type: "tool-call", toolCallId, toolName: redirect.toolName, arguments: redirect.arguments } as const;
  return { kind: "tool-call", call, event };
}

/** The replies that deliver a caller's result for a pending call: result message(s), then stream_close. */
export function resultReplies(call: PendingCall, output: ToolOutput): AgentClientMessage[] {
  const results: ExecResultInit[] =
    call.exec.case === "mcpArgs"
      ? [
          {
            case: "mcpResult",
            value: {
              result: {
                case: "success",
                value: {
                  content: [{ content: { case: "text", value: { text: output.content } } }],
                  isError: output.isError,
                },
              },
            },
          },
        ]
      : toNativeResult(call.exec, output);
  const replies = results.map((result) => execReply(call.execId, call.execIdString, result));
  replies.push(streamClose(call.execId));
  return replies;
}
