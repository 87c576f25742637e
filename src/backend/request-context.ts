/**
 * The answer to `exec_server_message.request_context_args` (docs/protocol.md §4.4 step 3, §4.5 RequestContext,
 * §5.2): workspace env, the caller's tools as MCP tool definitions and the system prompt as `cloud_rule` (the
 * channel the agent honours; plain system messages are ignored server-side, as another client found).
 */
import { create } from "@bufbuild/protobuf";
import { type McpToolDefinition, McpToolDefinitionSchema } from "../gen/agent/v1/mcp_pb.js";
import { type RequestContext, RequestContextSchema } from "../gen/agent/v1/request_context_pb.js";
import type { ToolNameMap } from "./tool-names.js";
import type { ClientTool, JsonValue } from "./types.js";
import { encodeJsonValue } from "./value-codec.js";
import type { WorkspaceEnvironment } from "./workspace-environment.js";

/** `McpToolDefinition.provider_identifier` of every tool cursor-bridge declares. */
export const PROVIDER_IDENTIFIER = "cursor-bridge";

/** EPH's default schema for a tool declared without one (§5.2). */
const EMPTY_OBJECT_SCHEMA: { [key: string]: JsonValue } = { type: "object", properties: {}, required: [] };

/** One caller tool as an MCP tool definition; input_schema is serialized `google.protobuf.Value` (§4.5, SUDO 88f059e). */
export function toMcpToolDefinition(tool: ClientTool, modelName: string): McpToolDefinition {
  const schema = Object.keys(tool.inputSchema).length > 0 ? tool.inputSchema : EMPTY_OBJECT_SCHEMA;
  return create(McpToolDefinitionSchema, {
    name: modelName,
    toolName: modelName,
    description: tool.description,
    inputSchema: encodeJsonValue(schema),
    providerIdentifier: PROVIDER_IDENTIFIER,
  });
}

/** Everything the request context is built from. */
export interface RequestContextInput {
  environment: WorkspaceEnvironment;
  tools: readonly ClientTool[];
  toolNames: ToolNameMap;
  /** The caller's system prompt; empty when none. */
  systemPrompt: string;
}

/** Builds the `RequestContext` returned in `request_context_result.success`. */
export function buildRequestContext(input: RequestContextInput): RequestContext {
  const tools: McpToolDefinition[] = [];
  for (const tool of input.tools) {
    const modelName = input.toolNames.toModel(tool.name);
    if (modelName !== undefined && !tools.some((t) => t.name === modelName)) {
      tools.push(toMcpToolDefinition(tool, modelName));
    }
  }
  const { environment } = input;
  return create(RequestContextSchema, {
    env: {
      osVersion: environment.osVersion,
      workspacePaths: [environment.workspacePath],
      shell: environment.shell,
      timeZone: environment.timeZone,
      projectFolder: environment.workspacePath,
    },
    tools,
    ...(input.systemPrompt === "" ? {} : { cloudRule: input.systemPrompt }),
  });
}
