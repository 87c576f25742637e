/**
 * ACP as a door of the shared cross-door tests: the real agent (`createAcpAgent`) on a given engine, reached by the
 * ACP client SDK over the stream transport `cursor-bridge acp` serves on stdio (ndjson lines, the agent's line limit
 * in front, the SDK's reader behind it). Each prompt gets a fresh agent, editor and session, so a case sees nothing
 * of another's.
 */
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { client, ndJsonStream, PROTOCOL_VERSION, type SessionNotification } from "@agentclientprotocol/sdk";
import type { Engine } from "../../src/engine/index.js";
import { createMemoryResponseStore } from "../../src/stores/memory/response-store.js";
import { createAcpAgent } from "../../src/surfaces/acp/agent.js";
import { limitLines, MAX_LINE_BYTES } from "../../src/surfaces/acp/line-limit.js";
import { acpSessionStoreOver } from "../../src/surfaces/acp/session-store.js";
import { silentLogger } from "../../src/util/logger.js";
import type { AcpDoor } from "./doors.js";

/** How a prompt ended: its stop reason and the text streamed, or the JSON-RPC error it was answered with. */
export interface AcpAnswer {
  stopReason?: string;
  text: string;
  error?: { code: number; message: string; data?: { code?: string; detail?: string; retryable?: boolean } };
}

/** What the agent's session is set up with before the prompt. */
export interface AcpPromptOptions {
  /** The model the session starts on. @default "default" */
  model?: string;
  /** `session/set_config_option` calls made before the prompt (an error there is the answer). */
  config?: Record<string, string>;
  /**
   * Rewrites each JSON-RPC line the editor sends before the agent reads it (the SDK's client writes one message a
   * chunk): how a case puts on the wire what the client cannot serialize itself, e.g. nesting 10,000 deep.
   */
  wire?(line: string): string;
}

function rpcError(error: unknown): AcpAnswer["error"] | undefined {
  const value = error as { code?: unknown; message?: unknown; data?: unknown } | null;
  if (typeof value?.code !== "number" || typeof value.message !== "string") return undefined;
  return { code: value.code, message: value.message, data: (value.data ?? undefined) as never };
}

function textOf(updates: readonly SessionNotification[]): string {
  return updates
    .map((n) => n.update)
    .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
    .join("");
}

/** Sends one `session/prompt` with these content blocks (anything: hostile blocks are the point) to a new session. */
export async function promptOverAcp(
  engine: Engine,
  prompt: unknown,
  options: AcpPromptOptions = {},
): Promise<AcpAnswer> {
  const acp = createAcpAgent({
    stack: async () => ({ engine, sessions: acpSessionStoreOver(createMemoryResponseStore()) }),
    auth: { methods: [], authenticate: async () => {} },
    logger: silentLogger,
    version: "test",
    defaultModel: options.model ?? "default",
    newSessionId: randomUUID,
    now: Date.now,
  });
  const wire = options.wire;
  const toAgent =
    wire === undefined
      ? new TransformStream<Uint8Array, Uint8Array>()
      : new TransformStream<Uint8Array, Uint8Array>({
          transform: (chunk, out) => out.enqueue(new TextEncoder().encode(wire(new TextDecoder().decode(chunk)))),
        });
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  // As `cursor-bridge acp` wires its stdio (src/cli/acp.ts).
  const served = acp.app.connect(
    ndJsonStream(fromAgent.writable, limitLines(toAgent.readable), { maxMessageBytes: MAX_LINE_BYTES + 1024 }),
  );
  const updates: SessionNotification[] = [];
  const editor = client({ name: "door-test" }).onNotification("session/update", ({ params }) => {
    updates.push(params);
  });
  const connection = editor.connect(
    ndJsonStream(toAgent.writable, fromAgent.readable, { maxMessageBytes: MAX_LINE_BYTES * 2 }),
  );
  const agent = connection.agent;
  try {
    await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await agent.request("session/new", { cwd: tmpdir(), mcpServers: [] });
    for (const [configId, value] of Object.entries(options.config ?? {})) {
      await agent.request("session/set_config_option", { sessionId, configId, value });
    }
    const response = await agent.request("session/prompt", { sessionId, prompt: prompt as never });
    return { stopReason: response.stopReason, text: textOf(updates) };
  } catch (error) {
    const answered = rpcError(error);
    if (answered === undefined) throw error;
    return { text: textOf(updates), error: answered };
  } finally {
    connection.close();
    served.close();
    await acp.close();
  }
}

const text = (value: string) => ({ type: "text", text: value });

/**
 * ACP in the shared cross-door cases. A request is a prompt (its content blocks) and, for a case about the model,
 * the session's model (`session/set_config_option`, ACP's only place for one). Refusals are JSON-RPC errors: invalid
 * params (-32602) for what the agent reads and refuses, invalid request (-32600) for a message over the line limit,
 * which the agent answers without reading it (line-limit.ts).
 */
export const ACP_DOOR: AcpDoor = {
  transport: "acp",
  name: "acp",
  refusals: { invalid: -32602, tooLarge: -32602, bodyTooLarge: -32600 },
  overLimit: {
    imageBytes: 25 * 1024 * 1024,
    message: "(the limit of one JSON-RPC message to this agent) and was not read",
  },
  without: {
    toolSchema:
      "an ACP request declares no tools: the session's tools are its MCP servers' (their own tools/list), so no schema travels in a prompt",
    toolArguments:
      "an ACP prompt carries no history: the agent keeps the session's conversation itself, so no earlier tool call's arguments arrive",
    badToolArguments: "the same: no history, so no earlier tool call's arguments arrive in a prompt",
    foreignHost: "ACP runs on the editor's stdio: no network listener, no Host or Origin header",
  },
  basic: (model, value = "hi") => ({ model, prompt: [text(value)] }),
  // `_meta` is where ACP keeps arbitrary values in a content block; an unknown key is dropped by the SDK's schema
  // before the agent reads the prompt.
  content: (extra) => ({ body: { prompt: [{ ...text("x"), _meta: { extra } }] }, field: "prompt[0]._meta.extra" }),
  images: (images, mimeType) => ({
    body: { prompt: [text("x"), ...images.map((data) => ({ type: "image", mimeType, data }))] },
    fields: images.map((_, i) => `prompt[${i + 1}].data`),
  }),
};
