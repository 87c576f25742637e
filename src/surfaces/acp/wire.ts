/**
 * ACP's wire as this agent uses it, beyond the SDK's own types (`@agentclientprotocol/sdk` carries the protocol's
 * schema and validates every stable request against it): the frames a prompt's translation sends, the JSON-RPC error
 * codes by kind, the token counts in a response's `_meta`, and the params of the unstable methods the SDK leaves to
 * the agent (parsed in parse.ts).
 */
import type { McpServer, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SubagentStep } from "../../backend/types.js";
import type { ProxyErrorCode } from "../../util/errors.js";

/** What a prompt sends: a `session/update`, a subagent's step (subagents.ts) or an MCP call's arguments so far. */
export type AcpFrame =
  | { kind: "update"; update: SessionUpdate }
  | { kind: "subagent"; taskCallId: string; step: SubagentStep }
  | { kind: "arguments"; toolCallId: string; toolName: string; text: string };

/** JSON-RPC codes by kind. -32000 and -32002 are ACP's (auth required, resource not found); -32800 is cancelled. */
export const ACP_ERROR_CODES: Readonly<Record<ProxyErrorCode, number>> = {
  invalid_request: -32602,
  request_too_large: -32602,
  unsupported_media_type: -32602,
  not_found: -32602,
  unauthenticated: -32000,
  context_length_exceeded: -32010,
  quota_exceeded: -32011,
  key_budget_exceeded: -32011,
  rate_limited: -32012,
  permission_denied: -32013,
  backend_unavailable: -32014,
  backend_protocol: -32015,
  timeout: -32016,
  canceled: -32800,
  internal: -32603,
};

/** A turn's tokens, as a prompt response's `usage` and `_meta["cursor-bridge"].usage` carry them. */
export interface TurnTokens {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** `session/fork` params (ACP's unstable schema): the source session, the fork's folder and MCP servers. */
export interface ForkParams {
  sessionId: string;
  cwd: string;
  mcpServers?: McpServer[];
}

/** `session/set_model` params (ACP's older unstable schema, before models became a config option). */
export interface SetModelParams {
  sessionId: string;
  modelId: string;
}

/**
 * `models` of session/new, load, resume and fork in that schema (SessionModelState): what editors that switch models
 * with session/set_model show in their picker.
 */
export interface SessionModelState {
  currentModelId: string;
  availableModels: Array<{ modelId: string; name: string }>;
}

/** `session/set_title` params (ACP's unstable schema). */
export interface SetTitleParams {
  sessionId: string;
  title: string;
}
