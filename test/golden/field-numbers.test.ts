/**
 * Guards the field numbers other layers depend on against accidental renumbering in proto/. Every number below is
 * copied from the tables of docs/protocol.md (section cited per row); the captured vectors cover only tool calls.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ConversationActionSchema } from "../../src/gen/agent/v1/actions_pb.js";
import {
  AgentClientMessageSchema,
  AgentRunRequestSchema,
  AgentServerMessageSchema,
} from "../../src/gen/agent/v1/agent_pb.js";
import { ConversationStateStructureSchema } from "../../src/gen/agent/v1/conversation_state_pb.js";
import { ExecClientMessageSchema, ExecServerMessageSchema } from "../../src/gen/agent/v1/exec_pb.js";
import { InteractionUpdateSchema } from "../../src/gen/agent/v1/interaction_pb.js";
import { KvClientMessageSchema, KvServerMessageSchema } from "../../src/gen/agent/v1/kv_pb.js";
import { McpArgsSchema, McpToolDefinitionSchema } from "../../src/gen/agent/v1/mcp_pb.js";
import { RequestContextSchema } from "../../src/gen/agent/v1/request_context_pb.js";
import { BidiAppendRequestSchema } from "../../src/gen/aiserver/v1/bidi_pb.js";
import { ErrorDetails_Error, ErrorDetailsSchema } from "../../src/gen/aiserver/v1/error_pb.js";

const cases: [string, DescMessage, Record<string, number>][] = [
  [
    "§4.5 AgentClientMessage",
    AgentClientMessageSchema,
    {
      run_request: 1,
      exec_client_message: 2,
      kv_client_message: 3,
      conversation_action: 4,
      exec_client_control_message: 5,
      interaction_response: 6,
      client_heartbeat: 7,
      prewarm_request: 8,
    },
  ],
  [
    "§4.5 AgentRunRequest",
    AgentRunRequestSchema,
    { conversation_state: 1, action: 2, model_details: 3, mcp_tools: 4, conversation_id: 5, requested_model: 9 },
  ],
  ["§4.5 ConversationAction", ConversationActionSchema, { user_message_action: 1, resume_action: 2, cancel_action: 3 }],
  ["§4.5 RequestContext", RequestContextSchema, { rules: 2, env: 4, tools: 7, mcp_instructions: 14, cloud_rule: 16 }],
  [
    "§4.6 AgentServerMessage",
    AgentServerMessageSchema,
    {
      interaction_update: 1,
      exec_server_message: 2,
      conversation_checkpoint_update: 3,
      kv_server_message: 4,
      exec_server_control_message: 5,
      interaction_query: 7,
    },
  ],
  [
    "§4.6 InteractionUpdate",
    InteractionUpdateSchema,
    { text_delta: 1, thinking_delta: 4, token_delta: 8, heartbeat: 13, turn_ended: 14, step_completed: 17 },
  ],
  [
    "§4.7 ExecServerMessage",
    ExecServerMessageSchema,
    {
      id: 1,
      shell_args: 2,
      request_context_args: 10,
      mcp_args: 11,
      shell_stream_args: 14,
      exec_id: 15,
      span_context: 19,
    },
  ],
  [
    "§4.7 ExecClientMessage",
    ExecClientMessageSchema,
    { id: 1, shell_result: 2, request_context_result: 10, mcp_result: 11, shell_stream: 14, exec_id: 15 },
  ],
  ["§4.7 McpArgs", McpArgsSchema, { name: 1, args: 2, tool_call_id: 3, provider_identifier: 4, tool_name: 5 }],
  ["§4.5 McpToolDefinition", McpToolDefinitionSchema, { name: 1, description: 2, input_schema: 3, tool_name: 5 }],
  ["§4.8 KvServerMessage", KvServerMessageSchema, { id: 1, get_blob_args: 2, set_blob_args: 3, span_context: 4 }],
  ["§4.8 KvClientMessage", KvClientMessageSchema, { id: 1, get_blob_result: 2, set_blob_result: 3 }],
  [
    "§4.11 ConversationStateStructure",
    ConversationStateStructureSchema,
    { root_prompt_messages_json: 1, token_details: 5, turns: 8, mode: 10, file_states_v2: 15, read_paths: 18 },
  ],
  ["§4.3 BidiAppendRequest", BidiAppendRequestSchema, { data: 1, request_id: 2, append_seqno: 3, data_binary: 4 }],
  ["§4.12 ErrorDetails", ErrorDetailsSchema, { error: 1, details: 2, is_expected: 3 }],
];

describe("field numbers from the wire reference", () => {
  it.each(cases)("%s", (_section, schema, expected) => {
    const actual = Object.fromEntries(
      Object.keys(expected).map((name) => [name, schema.fields.find((field) => field.name === name)?.number]),
    );
    expect(actual).toEqual(expected);
  });

  it("keeps the ErrorDetails.Error values of §4.12", () => {
    expect(ErrorDetails_Error.OUTDATED_CLIENT).toBe(30);
    expect(ErrorDetails_Error.RESOURCE_EXHAUSTED).toBe(41);
    expect(ErrorDetails_Error.RATE_LIMITED_CHANGEABLE).toBe(51);
  });
});
