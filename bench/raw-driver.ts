/**
 * The baseline client of the benchmark: a minimal direct `agent.v1.AgentService/Run` driver built only on the
 * generated schema and connect-es (never on src/backend or src/protocol), so the comparison measures what cursor-bridge
 * adds over talking to Cursor directly. It answers what a turn asks (docs/protocol.md §4.4): `get_blob_args` from
 * its own content-addressed store, `set_blob_args` with an ack, `request_context_args` with the declared tools, and
 * client tool calls (`mcp_args`, §5.2) either with a result on the same stream or by abandoning the Run, which is
 * what replaying bridges do.
 */
import { createHash } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type AgentClientMessage, AgentClientMessageSchema } from "../src/gen/agent/v1/agent_pb.js";
import { AgentService } from "../src/gen/agent/v1/agent_service_pb.js";
import type { ConversationStateStructure } from "../src/gen/agent/v1/conversation_state_pb.js";
import type { ExecServerMessage } from "../src/gen/agent/v1/exec_pb.js";
import type { McpToolDefinition } from "../src/gen/agent/v1/mcp_pb.js";

/** A client version the emulator accepts (§2.1 format). */
const CLIENT_VERSION = "cli-2026.01.17-d239e66";

type ClientInit = MessageInitShape<typeof AgentClientMessageSchema>;

/** An AgentService client over one HTTP/2 connection. */
export type DirectClient = Client<typeof AgentService>;

/** Creates a Run client sending the §2.1 headers. */
export function createDirectClient(baseUrl: string, accessToken: string): DirectClient {
  const headers: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${accessToken}`);
    request.header.set("x-cursor-client-type", "cli");
    request.header.set("x-cursor-client-version", CLIENT_VERSION);
    request.header.set("x-ghost-mode", "true");
    return next(request);
  };
  return createClient(AgentService, createConnectTransport({ httpVersion: "2", baseUrl, interceptors: [headers] }));
}

/** Content-addressed blob store: id = SHA-256 of the data (§5.3). */
export class RawBlobStore {
  private readonly blobs = new Map<string, Uint8Array>();

  put(data: Uint8Array): Uint8Array {
    const id = new Uint8Array(createHash("sha256").update(data).digest());
    this.blobs.set(Buffer.from(id).toString("hex"), data);
    return id;
  }

  putJson(value: unknown): Uint8Array {
    return this.put(new TextEncoder().encode(JSON.stringify(value)));
  }

  get(id: Uint8Array): Uint8Array | undefined {
    return this.blobs.get(Buffer.from(id).toString("hex"));
  }
}

/**
 * What the driver does with a client tool call: answer it on the stream, abandon the Run (replay style), or hold it:
 * leave the Run open with the call unanswered until the turn's signal aborts it (a parked turn, bench/hop-floor.ts).
 */
export type ToolCallPolicy = (call: { name: string; callId: string }) => { result: string } | "abandon" | "hold";

/** One Run's inputs. */
export interface DirectTurnInput {
  state?: ConversationStateStructure | undefined;
  /** A new user message, or undefined for `resume_action` (§4.5). */
  userText: string | undefined;
  conversationId: string;
  model: string;
  tools: readonly McpToolDefinition[];
  /** Sent as `RequestContext.cloud_rule` (§4.5). */
  systemPrompt?: string;
  blobs: RawBlobStore;
  onToolCall?: ToolCallPolicy;
  /** Ends the Run (a held one included); the turn then resolves as abandoned. */
  signal?: AbortSignal;
}

/** What one Run produced, with timings relative to `performance.now()`. */
export interface DirectTurnResult {
  startedAt: number;
  /** First non-empty text delta; undefined when none came. */
  firstTextAt: number | undefined;
  endedAt: number;
  text: string;
  textDeltas: number;
  checkpoint: ConversationStateStructure | undefined;
  /** Tool calls the server asked for, in order. */
  toolCalls: { name: string; callId: string }[];
  /** True when the Run was abandoned on a tool call. */
  abandoned: boolean;
  /** `call_count` of every `tool_requests_listed` update the Run sent (addendum 2 §4), in order. */
  toolRequestsListed: number[];
}

/** Builds `AgentClientMessage{run_request}`. */
export function runRequestOf(input: DirectTurnInput): AgentClientMessage {
  const action: ClientInit = {
    message: {
      case: "runRequest",
      value: {
        ...(input.state === undefined ? {} : { conversationState: input.state }),
        action: {
          action:
            input.userText === undefined
              ? { case: "resumeAction", value: {} }
              : {
                  case: "userMessageAction",
                  value: { userMessage: { text: input.userText, messageId: "m", mode: 1 } },
                },
        },
        modelDetails: { modelId: input.model },
        requestedModel: { modelId: input.model },
        conversationId: input.conversationId,
      },
    },
  };
  return create(AgentClientMessageSchema, action);
}

/** A tiny push queue the Run request stream reads from. */
class Outbox implements AsyncIterable<AgentClientMessage> {
  private readonly items: AgentClientMessage[] = [];
  private wake: (() => void) | undefined;
  private done = false;

  push(init: ClientInit): void {
    this.items.push(create(AgentClientMessageSchema, init));
    this.wake?.();
  }

  close(): void {
    this.done = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AgentClientMessage> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) yield next;
      else if (this.done) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

function answerExec(
  exec: ExecServerMessage,
  input: DirectTurnInput,
  result: DirectTurnResult,
): ClientInit[] | "abandon" | "hold" {
  const { id, execId } = exec;
  const close: ClientInit = {
    message: { case: "execClientControlMessage", value: { message: { case: "streamClose", value: { id } } } },
  };
  if (exec.message.case === "requestContextArgs") {
    const requestContext = {
      tools: [...input.tools],
      ...(input.systemPrompt ? { cloudRule: input.systemPrompt } : {}),
    };
    const reply: ClientInit = {
      message: {
        case: "execClientMessage",
        value: {
          id,
          execId,
          message: { case: "requestContextResult", value: { result: { case: "success", value: { requestContext } } } },
        },
      },
    };
    return [reply, close];
  }
  if (exec.message.case !== "mcpArgs") throw new Error(`The baseline driver cannot answer exec ${exec.message.case}.`);
  const call = { name: exec.message.value.toolName || exec.message.value.name, callId: exec.message.value.toolCallId };
  result.toolCalls.push(call);
  const decision = input.onToolCall?.(call) ?? "abandon";
  if (decision === "abandon" || decision === "hold") return decision;
  const content = [{ content: { case: "text" as const, value: { text: decision.result } } }];
  const reply: ClientInit = {
    message: {
      case: "execClientMessage",
      value: { id, execId, message: { case: "mcpResult", value: { result: { case: "success", value: { content } } } } },
    },
  };
  return [reply, close];
}

/** A Run of one user message on a new conversation, no tools: the latency and throughput scenarios' request. */
export function runPromptTurn(client: DirectClient, prompt: string): Promise<DirectTurnResult> {
  return runDirectTurn(client, {
    userText: prompt,
    conversationId: crypto.randomUUID(),
    model: "default",
    tools: [],
    blobs: new RawBlobStore(),
  });
}

/**
 * `streams` concurrent {@link runPromptTurn}s of `prompt`, each of which must bring `deltas` text deltas; their total.
 */
export async function runConcurrentPromptTurns(
  client: DirectClient,
  streams: number,
  prompt: string,
  deltas: number,
): Promise<number> {
  const counts = await Promise.all(
    Array.from({ length: streams }, async () => {
      const r = await runPromptTurn(client, prompt);
      if (r.textDeltas !== deltas) throw new Error(`Run: ${r.textDeltas} of ${deltas} text deltas`);
      return r.textDeltas;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

/** Drives one Run to its end (or until it is abandoned on a tool call). */
export async function runDirectTurn(client: DirectClient, input: DirectTurnInput): Promise<DirectTurnResult> {
  const outbox = new Outbox();
  const controller = new AbortController();
  const result: DirectTurnResult = {
    startedAt: performance.now(),
    firstTextAt: undefined,
    endedAt: 0,
    text: "",
    textDeltas: 0,
    checkpoint: undefined,
    toolCalls: [],
    abandoned: false,
    toolRequestsListed: [],
  };
  outbox.push(runRequestOf(input));
  const stop = () => {
    result.abandoned = true;
    controller.abort();
  };
  input.signal?.addEventListener("abort", stop, { once: true });
  try {
    for await (const m of client.run(outbox, { signal: controller.signal })) {
      const kind = m.message;
      if (kind.case === "interactionUpdate") {
        const update = kind.value.message;
        if (update.case === "textDelta" && update.value.text !== "") {
          result.firstTextAt ??= performance.now();
          result.text += update.value.text;
          result.textDeltas++;
        } else if (update.case === "toolRequestsListed") result.toolRequestsListed.push(update.value.callCount);
        else if (update.case === "turnEnded") outbox.close();
      } else if (kind.case === "conversationCheckpointUpdate") result.checkpoint = kind.value;
      else if (kind.case === "kvServerMessage") {
        const kv = kind.value;
        if (kv.message.case === "getBlobArgs") {
          const data = input.blobs.get(kv.message.value.blobId);
          const value = data === undefined ? {} : { blobData: data };
          outbox.push({
            message: { case: "kvClientMessage", value: { id: kv.id, message: { case: "getBlobResult", value } } },
          });
        } else if (kv.message.case === "setBlobArgs") {
          input.blobs.put(kv.message.value.blobData);
          outbox.push({
            message: { case: "kvClientMessage", value: { id: kv.id, message: { case: "setBlobResult", value: {} } } },
          });
        }
      } else if (kind.case === "execServerMessage") {
        const answers = answerExec(kind.value, input, result);
        if (answers === "abandon") {
          result.abandoned = true;
          controller.abort();
          break;
        }
        if (answers === "hold") continue;
        for (const answer of answers) outbox.push(answer);
      }
    }
  } catch (error) {
    if (!result.abandoned) throw error;
  } finally {
    input.signal?.removeEventListener("abort", stop);
    outbox.close();
  }
  result.endedAt = performance.now();
  return result;
}
