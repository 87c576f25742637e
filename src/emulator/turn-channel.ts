/**
 * The wire side of one turn (docs/protocol.md §4.4, §5.1, §5.3): an outbox of server messages, a pump that reads
 * client messages and settles what the server waits for (KV answers by `id`; an exec on its result or `throw`, matched
 * by `id` — docs/protocol.md §5.1: `stream_close` is accepted, never required, except that a streamed shell is
 * finished by its exit event or a close), heartbeats while nothing else is sent (logging at debug level what it still
 * waits for), and one AbortSignal that ends every wait when the client cancels, goes away, or breaks the protocol.
 * Transport-neutral: Run and RunSSE both feed it.
 */
import { setMaxListeners } from "node:events";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type AgentClientMessage,
  type AgentRunRequest,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../gen/agent/v1/agent_pb.js";
import type { ExecClientControlMessage, ExecClientMessage, ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import type { InteractionQuerySchema, InteractionResponse } from "../gen/agent/v1/interaction_query_pb.js";
import type { KvClientMessage } from "../gen/agent/v1/kv_pb.js";
import type { Logger } from "../util/logger.js";
import { badRequest, blobNotFound } from "./errors.js";
import { AsyncQueue } from "./queue.js";

/** A client message and its size on the wire (for the flat-upload statistics). */
export interface InboundMessage {
  message: AgentClientMessage;
  size: number;
}

const HALF_CLOSE_GRACE_MS = 50;

/** How an exec ended: the typed reply, or the client's `throw` text. */
export interface ExecAnswer {
  reply: ExecClientMessage["message"] | undefined;
  thrown: string | undefined;
}

type ExecArgs = Exclude<ExecServerMessage["message"], { case: undefined }>;
type ReplyCase = Exclude<ExecClientMessage["message"]["case"], undefined>;

interface ExecWait {
  execId: string;
  expected: ReplyCase;
  /** Shell-stream events received so far (a `shell_stream` exec sends several). */
  streamed: ExecClientMessage[];
  resolve(answer: ExecAnswer): void;
  /** The `[[emu:abort-exec MS]]` timer, cleared when the exec settles. */
  abortTimer?: ReturnType<typeof setTimeout>;
}

interface KvWait {
  kind: "getBlobResult" | "setBlobResult";
  resolve(data: Uint8Array | undefined): void;
  reject(reason: unknown): void;
}

/** Ends waits when the client asks to cancel (§4.5 cancel_action). */
export class TurnCancelled extends Error {
  constructor() {
    super("The client canceled the turn.");
    this.name = "TurnCancelled";
  }
}

/** The client's side of the stream failed or was reset: the client went away. */
export class ClientGone extends Error {
  constructor(cause: unknown) {
    super("The client went away.", { cause });
    this.name = "ClientGone";
  }
}

/** Options of {@link TurnChannel}. */
export interface TurnChannelOptions {
  inbound: AsyncIterable<InboundMessage>;
  clientSignal: AbortSignal;
  heartbeatIntervalMs: number;
  /** How long to wait for the first `run_request`. */
  firstMessageTimeoutMs: number;
  logger: Logger;
  onInboundBytes(size: number): void;
}

/** One turn's message plumbing. */
export class TurnChannel {
  readonly outbox = new AsyncQueue<AgentServerMessage>();
  private readonly controller = new AbortController();
  private readonly kvWaits = new Map<number, KvWait>();
  private readonly execWaits = new Map<number, ExecWait>();
  /** Execs already settled: a late `stream_close` or heartbeat for them is fine, a second result is not. */
  private readonly settledExecs = new Set<number>();
  /** Execs the server aborted (`[[emu:abort-exec]]`); a late reply to one is ignored, not rejected. */
  private readonly abortedExecs = new Set<number>();
  private lastWaitingLog = "";
  /** Interaction queries awaiting the client's answer, by id (cursor-protocol-addendum-2.md §7). */
  private readonly queryWaits = new Map<number, (response: InteractionResponse) => void>();
  private nextQueryId = 1;
  private nextKvId = 1;
  private nextExecId = 1;
  private sentSinceTick = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly firstTimer: NodeJS.Timeout;
  private halfCloseTimer: NodeJS.Timeout | undefined;
  private resolveFirst: ((request: AgentRunRequest) => void) | undefined;
  private firstReceived = false;
  /** Resolves with the turn's run request (the first client message). */
  readonly runRequest: Promise<AgentRunRequest>;

  constructor(private readonly options: TurnChannelOptions) {
    // Every pending wait listens on the turn signal; a long conversation has many.
    setMaxListeners(0, this.controller.signal);
    this.runRequest = new Promise((resolve, reject) => {
      this.resolveFirst = resolve;
      this.signal.addEventListener("abort", () => reject(this.signal.reason), { once: true });
    });
    this.runRequest.catch(() => undefined);
    // One listener fails every pending KV wait: a listener per wait made each new wait scan all the others (Node's
    // EventTarget checks for duplicates), quadratic for a conversation of thousands of blobs.
    this.signal.addEventListener(
      "abort",
      () => {
        for (const wait of this.kvWaits.values()) wait.reject(this.signal.reason);
        this.kvWaits.clear();
      },
      { once: true },
    );
    const onClientAbort = (): void => this.abort(new ClientGone(options.clientSignal.reason));
    if (options.clientSignal.aborted) onClientAbort();
    else options.clientSignal.addEventListener("abort", onClientAbort, { once: true });
    this.heartbeat = setInterval(() => this.tick(), options.heartbeatIntervalMs);
    this.firstTimer = setTimeout(() => {
      if (!this.firstReceived) this.abort(new ConnectError("No run_request arrived in time.", Code.DeadlineExceeded));
    }, options.firstMessageTimeoutMs);
    void this.pump();
  }

  /** Aborts when the turn must stop waiting: cancel, client gone, protocol error, or dispose. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the client sent `cancel_action`. */
  get cancelled(): boolean {
    return this.signal.aborted && this.signal.reason instanceof TurnCancelled;
  }

  /** Queues a server message. */
  send(init: MessageInitShape<typeof AgentServerMessageSchema>): void {
    this.sentSinceTick = true;
    this.outbox.push(create(AgentServerMessageSchema, init));
  }

  /** Asks the client for a blob (§5.3); rejects with `Blob not found` when the answer carries no data. */
  async getBlob(blobId: Uint8Array): Promise<Uint8Array> {
    const id = this.nextKvId++;
    const data = await this.waitKv(id, "getBlobResult", () =>
      this.send({
        message: { case: "kvServerMessage", value: { id, message: { case: "getBlobArgs", value: { blobId } } } },
      }),
    );
    if (data === undefined) throw blobNotFound();
    return data;
  }

  /** Stores a blob in the client's store and waits for the ack (no ack: the turn waits forever, heartbeats only). */
  async setBlob(blobId: Uint8Array, blobData: Uint8Array): Promise<void> {
    const id = this.nextKvId++;
    await this.waitKv(id, "setBlobResult", () =>
      this.send({
        message: {
          case: "kvServerMessage",
          value: { id, message: { case: "setBlobArgs", value: { blobId, blobData } } },
        },
      }),
    );
  }

  /**
   * Sends an exec request and resolves on its result or `throw` (addendum §1); a `shell_stream` exec resolves on its
   * exit event or a `stream_close`, with the last event as the reply.
   */
  exec(args: ExecArgs, expected: ReplyCase, abortAfterMs?: number): Promise<ExecAnswer> {
    const id = this.nextExecId++;
    const execId = `exec-${id}-${Math.random().toString(36).slice(2, 10)}`;
    const done = new Promise<ExecAnswer>((resolve, reject) => {
      const wait: ExecWait = { execId, expected, streamed: [], resolve };
      if (abortAfterMs !== undefined)
        wait.abortTimer = setTimeout(() => this.abortExec(id, abortAfterMs), abortAfterMs);
      this.execWaits.set(id, wait);
      this.signal.addEventListener("abort", () => reject(this.signal.reason), { once: true });
    });
    this.send({ message: { case: "execServerMessage", value: { id, execId, message: args } } });
    return done;
  }

  /**
   * Sends an `interaction_query` and resolves with the client's `interaction_response` of the same id (the server
   * waits as long as it takes; heartbeats keep flowing). An answer to an id never asked is a protocol error.
   */
  ask(query: NonNullable<MessageInitShape<typeof InteractionQuerySchema>["query"]>): Promise<InteractionResponse> {
    const id = this.nextQueryId++;
    const done = new Promise<InteractionResponse>((resolve, reject) => {
      this.queryWaits.set(id, resolve);
      this.signal.addEventListener("abort", () => reject(this.signal.reason), { once: true });
    });
    this.send({ message: { case: "interactionQuery", value: { id, query } } });
    return done;
  }

  private onInteractionResponse(response: InteractionResponse): void {
    const resolve = this.queryWaits.get(response.id);
    if (resolve === undefined) {
      throw badRequest(`interaction_response answers id ${response.id}, but no such interaction_query is open.`);
    }
    this.queryWaits.delete(response.id);
    resolve(response);
  }

  /**
   * §5.1 step 4: the server cancels an exec it still waits for with `exec_server_control_message.abort{id}`. The
   * exec settles as thrown; what the client sends for it later is ignored (the reference does not say the real
   * server rejects it, so the emulator accepts it).
   */
  private abortExec(id: number, afterMs: number): void {
    const wait = this.execWaits.get(id);
    if (wait === undefined || this.signal.aborted) return;
    this.send({ message: { case: "execServerControlMessage", value: { message: { case: "abort", value: { id } } } } });
    this.abortedExecs.add(id);
    this.settleExec(id, wait, undefined, `aborted by the server after ${afterMs} ms`);
  }

  /** Stops every wait with `reason` (the first reason wins). */
  abort(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Clears timers and stops waiting; safe to call twice. */
  dispose(): void {
    for (const wait of this.execWaits.values()) clearTimeout(wait.abortTimer);
    clearInterval(this.heartbeat);
    clearTimeout(this.firstTimer);
    clearTimeout(this.halfCloseTimer);
    this.abort(new ConnectError("turn finished", Code.Canceled));
  }

  private tick(): void {
    if (!this.sentSinceTick && !this.outbox.closed) {
      this.logWaiting();
      this.outbox.push(
        create(AgentServerMessageSchema, {
          message: { case: "interactionUpdate", value: { message: { case: "heartbeat", value: {} } } },
        }),
      );
    }
    this.sentSinceTick = false;
  }

  /** Says at debug level what a heartbeat-only turn waits for, once per change, so a developer sees why it stalls. */
  private logWaiting(): void {
    const execs = [...this.execWaits].map(([id, wait]) =>
      wait.expected === "shellStream"
        ? `exec ${id}: shell_stream exit or stream_close`
        : `exec ${id}: ${wait.expected}`,
    );
    const kvs = [...this.kvWaits].map(([id, wait]) => `kv ${id}: ${wait.kind}`);
    const waiting = [...execs, ...kvs].join("; ");
    if (waiting === this.lastWaitingLog) return;
    this.lastWaitingLog = waiting;
    if (waiting !== "") this.options.logger.debug("turn waits for the client", { waiting });
  }

  private waitKv(id: number, kind: KvWait["kind"], send: () => void): Promise<Uint8Array | undefined> {
    const done = new Promise<Uint8Array | undefined>((resolve, reject) => {
      if (this.signal.aborted) reject(this.signal.reason);
      else this.kvWaits.set(id, { kind, resolve, reject });
    });
    send();
    return done;
  }

  private async pump(): Promise<void> {
    try {
      for await (const { message, size } of this.options.inbound) {
        if (this.signal.aborted) return;
        this.options.onInboundBytes(size);
        this.dispatch(message);
      }
      // A reset stream also ends the request body, and the reset reaches the handler's signal a moment later: give it
      // that moment before calling this a half-close, which leaves nothing to answer what the server still waits for.
      this.halfCloseTimer = setTimeout(() => {
        if (this.options.clientSignal.aborted) this.abort(new ClientGone(this.options.clientSignal.reason));
        else this.abort(new ConnectError("The client closed its request stream before the turn ended.", Code.Canceled));
      }, HALF_CLOSE_GRACE_MS);
    } catch (error) {
      const connectError = ConnectError.from(error, Code.InvalidArgument);
      const gone = connectError.code === Code.Canceled || connectError.code === Code.Aborted;
      this.abort(gone ? new ClientGone(error) : connectError);
    }
  }

  private dispatch(message: AgentClientMessage): void {
    const m = message.message;
    if (!this.firstReceived) {
      if (m.case === "clientHeartbeat" || m.case === "prewarmRequest") return;
      if (m.case !== "runRequest")
        throw badRequest(`The first client message must be run_request, got ${m.case ?? "an empty message"}.`);
      this.firstReceived = true;
      this.resolveFirst?.(m.value);
      return;
    }
    switch (m.case) {
      case "kvClientMessage":
        this.onKv(m.value);
        return;
      case "execClientMessage":
        this.onExec(m.value);
        return;
      case "execClientControlMessage":
        this.onExecControl(m.value.message);
        return;
      case "interactionResponse":
        this.onInteractionResponse(m.value);
        return;
      case "conversationAction":
        if (m.value.action.case === "cancelAction") this.abort(new TurnCancelled());
        else this.options.logger.warn("ignoring mid-turn conversation_action", { action: m.value.action.case });
        return;
      case "clientHeartbeat":
      case "prewarmRequest":
        return;
      case "runRequest":
        throw badRequest("A second run_request arrived on a stream whose turn is running.");
      default:
        throw badRequest(`Unexpected client message ${m.case ?? "(empty)"}: the server asked no such question.`);
    }
  }

  private onKv(message: KvClientMessage): void {
    const wait = this.kvWaits.get(message.id);
    if (wait === undefined) throw badRequest(`kv_client_message answers unknown id ${message.id}.`);
    if (message.message.case !== wait.kind) {
      throw badRequest(
        `kv_client_message ${message.id} must carry ${wait.kind}, got ${message.message.case ?? "nothing"}.`,
      );
    }
    this.kvWaits.delete(message.id);
    if (message.message.case === "getBlobResult") wait.resolve(message.message.value.blobData);
    else {
      if (message.message.case === "setBlobResult" && message.message.value.error !== undefined) {
        this.options.logger.warn("client failed to store a blob", { error: message.message.value.error.message });
      }
      wait.resolve(undefined);
    }
  }

  private execWait(id: number, execId?: string): ExecWait | undefined {
    const wait = this.execWaits.get(id);
    if (wait === undefined) {
      if (this.settledExecs.has(id)) return undefined;
      throw badRequest(`Exec reply for unknown id ${id}.`);
    }
    // §5.1, addendum §1: the real server matches by id; an empty exec_id is accepted, a different non-empty one is not.
    if (execId !== undefined && execId !== "" && execId !== wait.execId) {
      throw badRequest(`Exec reply for id ${id} carries exec_id "${execId}", expected "${wait.execId}".`);
    }
    return wait;
  }

  private onExec(message: ExecClientMessage): void {
    const wait = this.execWait(message.id, message.execId);
    if (wait === undefined && this.abortedExecs.has(message.id)) {
      this.options.logger.debug("ignoring a reply to an aborted exec", { id: message.id });
      return;
    }
    if (wait === undefined) throw badRequest(`Exec ${message.id} was answered twice.`);
    if (message.message.case !== wait.expected) {
      throw badRequest(
        `Exec ${message.id} must be answered with ${wait.expected}, got ${message.message.case ?? "nothing"}.`,
      );
    }
    if (message.message.case === "shellStream") {
      wait.streamed.push(message);
      if (message.message.value.event.case === "exit") this.settleExec(message.id, wait, message.message);
      return;
    }
    this.settleExec(message.id, wait, message.message);
  }

  private onExecControl(control: ExecClientControlMessage["message"]): void {
    if (control.case === undefined) throw badRequest("Empty exec_client_control_message.");
    const wait = this.execWait(control.value.id);
    // A heartbeat, or a close after the result (optional, addendum §1), for an exec already settled.
    if (wait === undefined) {
      if (control.case === "throw" && !this.abortedExecs.has(control.value.id)) {
        throw badRequest(`Exec ${control.value.id} threw after its result.`);
      }
      return;
    }
    if (control.case === "heartbeat") return;
    if (control.case === "throw") {
      this.settleExec(control.value.id, wait, undefined, control.value.error);
      return;
    }
    // stream_close: finishes a shell stream; any other exec must have had its result first.
    const last = wait.streamed.at(-1);
    if (last === undefined) throw badRequest(`Exec ${control.value.id} was closed without a result or throw.`);
    this.settleExec(control.value.id, wait, last.message);
  }

  private settleExec(id: number, wait: ExecWait, reply: ExecAnswer["reply"], thrown?: string): void {
    clearTimeout(wait.abortTimer);
    this.execWaits.delete(id);
    this.settledExecs.add(id);
    wait.resolve({ reply, thrown });
  }
}
