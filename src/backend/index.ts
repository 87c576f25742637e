/**
 * Public surface of the agent client, for the composition roots (server/, cli/, plugin/) and the engine. Its
 * conversation store is one of src/stores/.
 */
export { type AgentClientOptions, createAgentClient, DEFAULT_STALL_TIMEOUT_MS } from "./agent-client.js";
export { AUTO_MODEL_ALIAS, resolveModelId } from "./models.js";
export { NATIVE_TOOL_TABLE } from "./native-redirect.js";
export { PROVIDER_IDENTIFIER } from "./request-context.js";
export type * from "./types.js";
export { defaultWorkspaceEnvironment, type WorkspaceEnvironment } from "./workspace-environment.js";
