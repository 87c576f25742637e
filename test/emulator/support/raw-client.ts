/**
 * A raw connect-es client for the emulator tests, built only on the generated schema (not the project's own Cursor
 * client): headers, a local blob store, and a scripted "client side" that answers KV and exec requests.
 */

import { createHash } from "node:crypto";
import { create, fromJson, type JsonValue, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { type Client, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AsyncQueue } from "../../../src/emulator/queue.js";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
} from "../../../src/gen/agent/v1/agent_pb.js";
import { AgentService } from "../../../src/gen/agent/v1/agent_service_pb.js";
import type { ConversationStateStructure } from "../../../src/gen/agent/v1/conversation_state_pb.js";
import type { ExecServerMessage } from "../../../src/gen/agent/v1/exec_pb.js";
import { McpToolDefinitionSchema } from "../../../src/gen/agent/v1/mcp_pb.js";
import type { SelectedImageSchema } from "../../../src/gen/agent/v1/selected_context_pb.js";

/** The client version every test sends unless it tests the version rule. */
export const CLIENT_VERSION = "cli-2026.01.17-d239e66";

/** Standard Cursor headers (§2.1). */
export function cursorHeaders(token: string, overrides: Record<string, string | null> = {}): Record<string, string> {
  const headers: Record<string, string | null> = {
    authorization: `Bearer ${token}`,
    "x-cursor-client-type": "cli",
    "x-cursor-client-version": CLIENT_VERSION,
    "x-ghost-mode": "true",
    ...overrides,
  };
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== null));
}

function headerInterceptor(headers: () => Record<string, string>): Interceptor {
  return (next) => (request) => {
    for (const [key, value] of Object.entries(headers())) request.header.set(key, value);
    return next(request);
  };
}

/** An AgentService client over HTTP/2 (or HTTP/1.1 for unary calls). */
export function agentClient(
  baseUrl: string,
  token: string,
  options: { httpVersion?: "1.1" | "2"; overrides?: Record<string, string | null> } = {},
): Client<typeof AgentService> {
  const transport = createConnectTransport({
    httpVersion: options.httpVersion ?? "2",
    baseUrl,
    interceptors: [headerInterceptor(() => cursorHeaders(token, options.overrides))],
  });
  return createClient(AgentService, transport);
}

/** SHA-256 blob id. */
export function blobId(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/** The client's content-addressed blob store (§5.3). */
export class BlobStore {
  readonly blobs = new Map<string, Uint8Array>();
  put(data: Uint8Array): Uint8Array {
    const id = blobId(data);
    this.blobs.set(Buffer.from(id).toString("hex"), data);
    return id;
  }
  putJson(value: unknown): Uint8Array {
    return this.put(new TextEncoder().encode(JSON.stringify(value)));
  }
  get(id: Uint8Array): Uint8Array | undefined {
    return this.blobs.get(Buffer.from(id).toString("hex"));
  }
  copy(): BlobStore {
    const next = new BlobStore();
    for (const [k, v] of this.blobs) next.blobs.set(k, v);
    return next;
  }
}

/** A declared client tool with a JSON schema encoded as google.protobuf.Value bytes (§5.2). */
export function toolDefinition(name: string) {
  const schema = { type: "object", properties: {}, required: [] } as JsonValue;
  return create(McpToolDefinitionSchema, {
    name,
    toolName: name,
    providerIdentifier: "test",
    description: `the ${name} tool`,
    inputSchema: toBinary(ValueSchema, fromJson(ValueSchema, schema)),
  });
}

/** Options of a run request. */
export interface RunRequestOptions {
  state?: ConversationStateStructure | undefined;
  conversationId?: string;
  model?: string;
  resume?: boolean;
  /** `UserMessage.selected_context.selected_images` of the user message. */
  images?: MessageInitShape<typeof SelectedImageSchema>[];
  /**
   * Select the model with `requested_model` only (base id + parameters, as the official SDK does), no
   * `model_details`; `model` is then the requested model's id.
   */
  requested?: { parameters?: { id: string; value: string }[]; maxMode?: boolean; withModelDetails?: boolean };
}

/** `AgentClientMessage{run_request}` with a user message (or a resume action). */
export function runRequest(text: string, options: RunRequestOptions = {}): AgentClientMessage {
  const action: MessageInitShape<typeof AgentClientMessageSchema> = {
    message: {
      case: "runRequest",
      value: {
        ...(options.state === undefined ? {} : { conversationState: options.state }),
        action: {
          action: options.resume
            ? { case: "resumeAction", value: {} }
            : {
                case: "userMessageAction",
                value: {
                  userMessage: {
                    text,
                    messageId: "m1",
                    mode: 1,
                    ...(options.images === undefined ? {} : { selectedContext: { selectedImages: options.images } }),
                  },
                },
              },
        },
        ...(options.requested === undefined || options.requested.withModelDetails === true
          ? { modelDetails: { modelId: options.model ?? "composer-1" } }
          : {}),
        ...(options.requested === undefined
          ? {}
          : {
              requestedModel: {
                modelId: options.model ?? "composer-1",
                parameters: options.requested.parameters ?? [],
                maxMode: options.requested.maxMode ?? false,
              },
            }),
        conversationId: options.conversationId ?? "conv-1",
      },
    },
  };
  return create(AgentClientMessageSchema, action);
}

type ExecReply = MessageInitShape<typeof AgentClientMessageSchema>;
/** One case of the AgentClientMessage oneof, as an init object. */
export type ClientMessageCase = NonNullable<
  Extract<MessageInitShape<typeof AgentClientMessageSchema>, { $typeName?: undefined }>["message"]
>;

/** How the scripted client answers. */
export interface ClientScript {
  tools?: ReturnType<typeof toolDefinition>[];
  cloudRule?: string;
  /** Answer for an exec other than request_context; undefined = leave it unanswered. */
  onExec?: (exec: ExecServerMessage) => ClientMessageCase | undefined;
  /** Send stream_close after each exec answer. @default true */
  closeExecs?: boolean;
  /** Answer request_context_args with `tools`/`cloudRule`. @default true */
  answerRequestContext?: boolean;
  /** Ack set_blob_args. @default true */
  ackSets?: boolean;
  /** Called for every server message; may push extra client messages or return "stop" to stop reading. */
  onMessage?: (message: AgentServerMessage, send: (m: ExecReply) => void) => "stop" | undefined;
}

/** Everything a turn produced. */
export interface TurnResult {
  messages: AgentServerMessage[];
  text: string;
  thinking: string;
  tokens: number;
  checkpoint: ConversationStateStructure | undefined;
  turnEnded: boolean;
  error: ConnectError | undefined;
  heartbeats: number;
}

function updateCase(m: AgentServerMessage): string | undefined {
  return m.message.case === "interactionUpdate" ? m.message.value.message.case : undefined;
}

/** The answers a scripted client gives to one server message. */
export function answersFor(m: AgentServerMessage, store: BlobStore, script: ClientScript): ExecReply[] {
  const out: ExecReply[] = [];
  if (m.message.case === "kvServerMessage") {
    const kv = m.message.value;
    if (kv.message.case === "getBlobArgs") {
      const data = store.get(kv.message.value.blobId);
      out.push({
        message: {
          case: "kvClientMessage",
          value: { id: kv.id, message: { case: "getBlobResult", value: data === undefined ? {} : { blobData: data } } },
        },
      });
    } else if (kv.message.case === "setBlobArgs") {
      store.put(kv.message.value.blobData);
      if (script.ackSets !== false) {
        out.push({
          message: { case: "kvClientMessage", value: { id: kv.id, message: { case: "setBlobResult", value: {} } } },
        });
      }
    }
  }
  if (m.message.case === "execServerMessage") {
    const exec = m.message.value;
    const reply =
      exec.message.case === "requestContextArgs" && script.answerRequestContext !== false
        ? ({
            case: "execClientMessage",
            value: {
              id: exec.id,
              execId: exec.execId,
              message: {
                case: "requestContextResult",
                value: {
                  result: {
                    case: "success",
                    value: {
                      requestContext: {
                        tools: script.tools ?? [],
                        ...(script.cloudRule ? { cloudRule: script.cloudRule } : {}),
                      },
                    },
                  },
                },
              },
            },
          } as const)
        : exec.message.case === "requestContextArgs"
          ? undefined
          : script.onExec?.(exec);
    if (reply !== undefined) {
      out.push({ message: reply });
      if (script.closeExecs !== false) {
        out.push({
          message: {
            case: "execClientControlMessage",
            value: { message: { case: "streamClose", value: { id: exec.id } } },
          },
        });
      }
    }
  }
  return out;
}

/** Drives one Run over HTTP/2 with a scripted client side. */
export async function driveRun(
  client: Client<typeof AgentService>,
  first: AgentClientMessage,
  store: BlobStore,
  script: ClientScript = {},
  signal?: AbortSignal,
): Promise<TurnResult> {
  const queue = new AsyncQueue<AgentClientMessage>();
  queue.push(first);
  const result: TurnResult = {
    messages: [],
    text: "",
    thinking: "",
    tokens: 0,
    checkpoint: undefined,
    turnEnded: false,
    error: undefined,
    heartbeats: 0,
  };
  const send = (m: ExecReply): void => queue.push(create(AgentClientMessageSchema, m));
  try {
    for await (const m of client.run(queue, signal === undefined ? {} : { signal })) {
      collect(result, m);
      for (const answer of answersFor(m, store, script)) send(answer);
      if (script.onMessage?.(m, send) === "stop") break;
    }
  } catch (error) {
    result.error = ConnectError.from(error);
  } finally {
    queue.close();
  }
  return result;
}

/** Adds one server message to a result. */
export function collect(result: TurnResult, m: AgentServerMessage): void {
  result.messages.push(m);
  if (m.message.case === "conversationCheckpointUpdate") result.checkpoint = m.message.value;
  if (m.message.case !== "interactionUpdate") return;
  const u = m.message.value.message;
  if (u.case === "textDelta") result.text += u.value.text;
  if (u.case === "thinkingDelta") result.thinking += u.value.text;
  if (u.case === "tokenDelta") result.tokens += u.value.tokens;
  if (u.case === "turnEnded") result.turnEnded = true;
  if (u.case === "heartbeat") result.heartbeats++;
}

/** Interaction update cases in order (heartbeats dropped). */
export function updateCases(result: TurnResult): string[] {
  return result.messages.flatMap((m) => {
    const c = updateCase(m);
    return c === undefined || c === "heartbeat" ? [] : [c];
  });
}
