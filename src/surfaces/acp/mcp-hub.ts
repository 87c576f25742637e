/**
 * The MCP servers an editor passes in `session/new` / `session/load` (stdio and streamable HTTP), connected with the
 * MCP SDK's client for the life of the session. Their tools are offered to Cursor as MCP tool definitions named
 * `<server>__<tool>`; Cursor's calls of those names reach the server. A server that fails to start is reported
 * (its error kept in {@link McpHub.failures}) and the others keep working.
 */
import type { McpServer } from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientTool, JsonValue } from "../../backend/types.js";
import type { Logger } from "../../util/logger.js";

/** How long a server may take to start and list its tools. */
const CONNECT_TIMEOUT_MS = 20_000;

interface Connected {
  name: string;
  client: Client;
  /** Offered name → the server's tool name. */
  tools: Map<string, string>;
  /** Offered names of the tools whose annotations say `readOnlyHint: true`. */
  readOnly: Set<string>;
}

/** Which server and tool an offered name is, and whether the server calls the tool read-only. */
export interface McpToolInfo {
  server: string;
  tool: string;
  /** The tool's MCP annotations say `readOnlyHint: true`. */
  readOnly: boolean;
}

/** The result of one MCP call as text. */
export interface McpCallResult {
  content: string;
  isError: boolean;
}

/** A server that could not be started. */
export interface McpFailure {
  server: string;
  error: string;
}

/** One session's MCP servers. */
export interface McpHub {
  /** Every tool of every connected server, as caller tools. */
  readonly tools: ClientTool[];
  readonly failures: readonly McpFailure[];
  /** True when `name` is one of {@link tools}. */
  has(name: string): boolean;
  /** The server and tool behind an offered name, when it is one of {@link tools}. */
  info(name: string): McpToolInfo | undefined;
  call(name: string, argumentsJson: string, signal: AbortSignal): Promise<McpCallResult>;
  close(): Promise<void>;
}

function offeredName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_");
}

function transportOf(server: McpServer, cwd: string) {
  if ("type" in server && server.type === "http") {
    const headers = Object.fromEntries(server.headers.map((h) => [h.name, h.value]));
    return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
  }
  if ("type" in server && server.type === "sse") {
    throw new Error("MCP over SSE is not offered (initialize says mcpCapabilities.sse = false); use http.");
  }
  const stdio = server as Extract<McpServer, { command: string }>;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  for (const variable of stdio.env) env[variable.name] = variable.value;
  // The server's stderr is the editor's log too: inherit it (never our stdout, which carries ACP).
  return new StdioClientTransport({ command: stdio.command, args: stdio.args, env, cwd, stderr: "inherit" });
}

async function connect(server: McpServer, cwd: string, version: string): Promise<Connected> {
  const client = new Client({ name: "cursor-bridge", version });
  const timeout = AbortSignal.timeout(CONNECT_TIMEOUT_MS);
  await client.connect(transportOf(server, cwd), { signal: timeout, timeout: CONNECT_TIMEOUT_MS });
  const listed = await client.listTools(undefined, { signal: timeout, timeout: CONNECT_TIMEOUT_MS });
  const tools = new Map<string, string>();
  const readOnly = new Set<string>();
  for (const tool of listed.tools) {
    tools.set(offeredName(server.name, tool.name), tool.name);
    if (tool.annotations?.readOnlyHint === true) readOnly.add(offeredName(server.name, tool.name));
  }
  return Object.assign({ name: server.name, client, tools, readOnly }, { listed: listed.tools });
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return JSON.stringify(content ?? "");
  return content
    .map((block: { type?: string; text?: string; resource?: { text?: string; uri?: string } }) => {
      if (block.type === "text") return block.text ?? "";
      if (block.type === "resource") return block.resource?.text ?? block.resource?.uri ?? "";
      return `[${block.type ?? "content"}]`;
    })
    .join("\n");
}

/** Connects every server (in parallel); failures are kept, not thrown. */
export async function openMcpHub(
  servers: readonly McpServer[],
  options: { cwd: string; version: string; logger: Logger },
): Promise<McpHub> {
  const connected: Connected[] = [];
  const failures: McpFailure[] = [];
  const tools: ClientTool[] = [];
  const settled = await Promise.allSettled(servers.map((server) => connect(server, options.cwd, options.version)));
  settled.forEach((result, i) => {
    const name = servers[i]?.name ?? `#${i}`;
    if (result.status === "rejected") {
      const error = result.reason instanceof Error ? result.reason.message : String(result.reason);
      failures.push({ server: name, error });
      options.logger.warn("MCP server failed to start", { server: name, error });
      return;
    }
    const server = result.value as Connected & {
      listed: Array<{ name: string; description?: string; inputSchema: unknown }>;
    };
    connected.push(server);
    for (const tool of server.listed) {
      tools.push({
        name: offeredName(server.name, tool.name),
        description: tool.description ?? `${tool.name} (MCP server ${server.name})`,
        inputSchema: (tool.inputSchema ?? {}) as { [key: string]: JsonValue },
      });
    }
  });
  const owner = (name: string) => connected.find((server) => server.tools.has(name));
  return {
    tools,
    failures,
    has: (name) => owner(name) !== undefined,
    info(name) {
      const server = owner(name);
      if (server === undefined) return undefined;
      return { server: server.name, tool: server.tools.get(name) as string, readOnly: server.readOnly.has(name) };
    },
    async call(name, argumentsJson, signal) {
      const server = owner(name);
      if (server === undefined) return { content: `No MCP tool named ${name}.`, isError: true };
      let args: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(argumentsJson === "" ? "{}" : argumentsJson);
        if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as typeof args;
      } catch {
        return { content: "The tool arguments are not valid JSON.", isError: true };
      }
      try {
        const result = await server.client.callTool(
          { name: server.tools.get(name) as string, arguments: args },
          undefined,
          {
            signal,
          },
        );
        return { content: textOf(result.content), isError: result.isError === true };
      } catch (error) {
        return { content: error instanceof Error ? error.message : String(error), isError: true };
      }
    },
    async close() {
      await Promise.allSettled(connected.map((server) => server.client.close()));
    },
  };
}
