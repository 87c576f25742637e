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

/** What is kept per tool list and name map: their definitions, and the last context built with them. */
interface Built {
  definitions: readonly McpToolDefinition[];
  last?: { environment: WorkspaceEnvironment; systemPrompt: string; context: RequestContext };
}

/**
 * By tool list and name map. The agent client interns tool lists (tool-list-cache.ts), so every turn of a client that
 * sends the same tools asks with the same list: its schemas are encoded once (encoding a schema as a
 * `google.protobuf.Value` was most of the 0.9 ms between Cursor's request_context_args and the answer with a coding
 * agent's tools). And every Run asks for the request context before its first token, the turns of one client with
 * the same environment and (mostly) system prompt: the last context built for them is answered again, the same
 * object, so its encoding is kept too (streaming-encode.ts). Definitions and contexts are never changed once built.
 */
const builtByTools = new WeakMap<readonly ClientTool[], WeakMap<ToolNameMap, Built>>();

function builtFor(tools: readonly ClientTool[], toolNames: ToolNameMap): Built {
  let byNames = builtByTools.get(tools);
  const cached = byNames?.get(toolNames);
  if (cached !== undefined) return cached;
  const definitions: McpToolDefinition[] = [];
  const declared = new Set<string>();
  for (const tool of tools) {
    const modelName = toolNames.toModel(tool.name);
    if (modelName !== undefined && !declared.has(modelName)) {
      declared.add(modelName);
      definitions.push(toMcpToolDefinition(tool, modelName));
    }
  }
  if (byNames === undefined) {
    byNames = new WeakMap();
    builtByTools.set(tools, byNames);
  }
  const built: Built = { definitions };
  byNames.set(toolNames, built);
  return built;
}

/** Builds the `RequestContext` returned in `request_context_result.success` (the last one again for the same input). */
export function buildRequestContext(input: RequestContextInput): RequestContext {
  const built = builtFor(input.tools, input.toolNames);
  const { last } = built;
  if (last !== undefined && last.environment === input.environment && last.systemPrompt === input.systemPrompt) {
    return last.context;
  }
  const context = createRequestContext(input, built.definitions);
  built.last = { environment: input.environment, systemPrompt: input.systemPrompt, context };
  return context;
}

function createRequestContext(input: RequestContextInput, definitions: readonly McpToolDefinition[]): RequestContext {
  const tools = [...definitions];
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
