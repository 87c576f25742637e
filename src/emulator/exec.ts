/**
 * Turns a planned tool call into the wire messages of one exec round trip (docs/protocol.md §4.7, §4.10, §5.1,
 * §5.2): the `exec_server_message` args case, the `ToolCall` shown in partial/started/completed updates, the result
 * case the client must answer with, and the reply text once the result is in.
 */
import { create, fromJson, type JsonValue, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { ExecClientMessage, ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import { LsArgsSchema, ReadArgsSchema, WriteArgsSchema } from "../gen/agent/v1/file_exec_pb.js";
import { GrepArgsSchema } from "../gen/agent/v1/grep_exec_pb.js";
import { McpArgsSchema } from "../gen/agent/v1/mcp_pb.js";
import { FetchArgsSchema } from "../gen/agent/v1/misc_exec_pb.js";
import { ShellArgsSchema } from "../gen/agent/v1/shell_exec_pb.js";
import {
  EditToolCallSchema,
  FetchToolCallSchema,
  GrepToolCallSchema,
  LsToolCallSchema,
  McpToolCallSchema,
  ReadToolCallSchema,
  ShellToolCallSchema,
  type ToolCall,
  ToolCallSchema,
} from "../gen/agent/v1/tool_calls_pb.js";
import {
  editResultOf,
  fetchText,
  grepText,
  lsText,
  mcpText,
  readText,
  readToolResultOf,
  shellText,
  writeText,
} from "./exec-results.js";
import type { PlannedCall } from "./scripted-model.js";
import { parseShellCommand } from "./shell-parse.js";

/** The init shape of an ExecServerMessage's args oneof. */
type ExecArgs = Exclude<ExecServerMessage["message"], { case: undefined }>;
/** A client reply's result oneof. */
export type ExecReply = ExecClientMessage["message"];
/** The init shape of a ToolCall's oneof. */
type ToolCase = ToolCall["tool"];

/** One call ready to be issued. */
export interface PreparedCall {
  /** Name used in the reply: the tool name, or the native kind. */
  name: string;
  callId: string;
  modelCallId: string;
  args: ExecArgs;
  /** The ExecClientMessage case the client must answer with. */
  expectedReply: Exclude<ExecReply["case"], undefined>;
  /** The ToolCall of partial_tool_call (§4.6): only its case set; an MCP call also names its tool. */
  partial: ToolCall;
  /** The arguments as JSON text (partial_tool_call.args_text_delta). */
  argsText: string;
  /** The ToolCall with args (tool_call_started). */
  started: ToolCall;
  /** Reply text and completed ToolCall for the client's answer. */
  complete(reply: ExecReply): { text: string; toolCall: ToolCall };
}

/** Declared client tool as the server needs it for `mcp_args`. */
export interface DeclaredTool {
  name: string;
  toolName: string;
  providerIdentifier: string;
}

function toolCall(tool: ToolCase): ToolCall {
  return create(ToolCallSchema, { tool });
}

/** Encodes each argument as a serialized google.protobuf.Value (§4.7 McpArgs, §5.2). */
function mcpArgValues(args: Record<string, unknown>): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const [key, value] of Object.entries(args)) {
    out[key] = toBinary(ValueSchema, fromJson(ValueSchema, value as JsonValue));
  }
  return out;
}

/**
 * Prepares a planned call. `tool` is the declaration for an mcp call. Throws (with a readable message) when a
 * native call's arguments do not fit the exec args message. An mcp call's `McpArgs.tool_call_id` is `ids.callId`
 * (the envelopes' `call_id`) unless `ids.argsToolCallId` gives it its own (cursor-protocol-addendum-3 T5).
 */
export function prepareCall(
  planned: PlannedCall,
  ids: { callId: string; modelCallId: string; argsToolCallId?: string | undefined },
  tool: DeclaredTool | undefined,
): PreparedCall {
  const { callId, modelCallId } = ids;
  const argsText = JSON.stringify(planned.args);
  const base = { callId, modelCallId, argsText };
  if (planned.kind === "mcp") {
    const args = {
      name: tool?.name ?? planned.name,
      toolName: tool?.toolName ?? planned.name,
      providerIdentifier: tool?.providerIdentifier ?? "",
      toolCallId: ids.argsToolCallId ?? callId,
      args: mcpArgValues(planned.args),
    };
    return {
      ...base,
      name: planned.name,
      args: { case: "mcpArgs", value: create(McpArgsSchema, args) },
      expectedReply: "mcpResult",
      // The tool is named from the first snapshot on (its argument map comes with tool_call_started).
      partial: toolCall({ case: "mcpToolCall", value: create(McpToolCallSchema, { args: { ...args, args: {} } }) }),
      started: toolCall({ case: "mcpToolCall", value: create(McpToolCallSchema, { args }) }),
      complete(reply) {
        const result = reply.case === "mcpResult" ? reply.value : undefined;
        return {
          text: mcpText(result),
          toolCall: toolCall({ case: "mcpToolCall", value: create(McpToolCallSchema, { args, result }) }),
        };
      },
    };
  }
  return { ...base, name: planned.native, ...prepareNative(planned, callId) };
}

type NativePart = Pick<PreparedCall, "args" | "expectedReply" | "partial" | "started" | "complete">;

function prepareNative(planned: Extract<PlannedCall, { kind: "native" }>, callId: string): NativePart {
  const json = { ...planned.args, toolCallId: callId } as JsonValue;
  switch (planned.native) {
    case "shell":
      return nativeShell(json);
    case "read":
      return nativeRead(json);
    case "ls":
      return nativeLs(json);
    case "grep":
      return nativeGrep(json);
    case "write":
      return nativeWrite(json);
    case "fetch":
      return nativeFetch(json);
  }
}

function nativeShell(json: JsonValue): NativePart {
  const args = fromJson(ShellArgsSchema, json);
  // Current clients refuse a shell exec without it (cursor-protocol-addendum-2.md §6).
  args.parsingResult ??= parseShellCommand(args.command);
  return {
    args: { case: "shellArgs", value: args },
    expectedReply: "shellResult",
    partial: toolCall({ case: "shellToolCall", value: create(ShellToolCallSchema) }),
    started: toolCall({ case: "shellToolCall", value: create(ShellToolCallSchema, { args }) }),
    complete(reply) {
      const result = reply.case === "shellResult" ? reply.value : undefined;
      return {
        text: shellText(result),
        toolCall: toolCall({ case: "shellToolCall", value: create(ShellToolCallSchema, { args, result }) }),
      };
    },
  };
}

function nativeRead(json: JsonValue): NativePart {
  const args = fromJson(ReadArgsSchema, json);
  const toolArgs = { path: args.path };
  return {
    args: { case: "readArgs", value: args },
    expectedReply: "readResult",
    partial: toolCall({ case: "readToolCall", value: create(ReadToolCallSchema) }),
    started: toolCall({ case: "readToolCall", value: create(ReadToolCallSchema, { args: toolArgs }) }),
    complete(reply) {
      const result = reply.case === "readResult" ? reply.value : undefined;
      const value = create(ReadToolCallSchema, { args: toolArgs, result: readToolResultOf(result) });
      return { text: readText(result), toolCall: toolCall({ case: "readToolCall", value }) };
    },
  };
}

function nativeLs(json: JsonValue): NativePart {
  const args = fromJson(LsArgsSchema, json);
  return {
    args: { case: "lsArgs", value: args },
    expectedReply: "lsResult",
    partial: toolCall({ case: "lsToolCall", value: create(LsToolCallSchema) }),
    started: toolCall({ case: "lsToolCall", value: create(LsToolCallSchema, { args }) }),
    complete(reply) {
      const result = reply.case === "lsResult" ? reply.value : undefined;
      const value = create(LsToolCallSchema, { args, result });
      return { text: lsText(result), toolCall: toolCall({ case: "lsToolCall", value }) };
    },
  };
}

function nativeGrep(json: JsonValue): NativePart {
  const args = fromJson(GrepArgsSchema, json);
  return {
    args: { case: "grepArgs", value: args },
    expectedReply: "grepResult",
    partial: toolCall({ case: "grepToolCall", value: create(GrepToolCallSchema) }),
    started: toolCall({ case: "grepToolCall", value: create(GrepToolCallSchema, { args }) }),
    complete(reply) {
      const result = reply.case === "grepResult" ? reply.value : undefined;
      const value = create(GrepToolCallSchema, { args, result });
      return { text: grepText(result), toolCall: toolCall({ case: "grepToolCall", value }) };
    },
  };
}

function nativeWrite(json: JsonValue): NativePart {
  const args = fromJson(WriteArgsSchema, json);
  // A native write shows up as an edit tool call in the UI stream (ToolCall case 12, §4.10).
  const toolArgs = { path: args.path, streamContent: args.fileText };
  return {
    args: { case: "writeArgs", value: args },
    expectedReply: "writeResult",
    partial: toolCall({ case: "editToolCall", value: create(EditToolCallSchema) }),
    started: toolCall({ case: "editToolCall", value: create(EditToolCallSchema, { args: toolArgs }) }),
    complete(reply) {
      const result = reply.case === "writeResult" ? reply.value : undefined;
      const value = create(EditToolCallSchema, { args: toolArgs, result: editResultOf(result, args) });
      return { text: writeText(result), toolCall: toolCall({ case: "editToolCall", value }) };
    },
  };
}

function nativeFetch(json: JsonValue): NativePart {
  const args = fromJson(FetchArgsSchema, json);
  return {
    args: { case: "fetchArgs", value: args },
    expectedReply: "fetchResult",
    partial: toolCall({ case: "fetchToolCall", value: create(FetchToolCallSchema) }),
    started: toolCall({ case: "fetchToolCall", value: create(FetchToolCallSchema, { args }) }),
    complete(reply) {
      const result = reply.case === "fetchResult" ? reply.value : undefined;
      const value = create(FetchToolCallSchema, { args, result });
      return { text: fetchText(result), toolCall: toolCall({ case: "fetchToolCall", value }) };
    },
  };
}
