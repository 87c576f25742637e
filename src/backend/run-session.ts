/**
 * One open Run stream of a turn (docs/protocol.md §4.4): a pump reads every server message, answers KV, exec,
 * interaction queries and control messages at once, and hands caller-visible items to the turn through a
 * {@link TurnChannel}. Its heartbeats and stall watchdog are its {@link RunLiveness}'s; when the segment pauses on a
 * step's tool calls (the tool-call batch window, the idle check of a step whose listed calls have not all come) is its
 * {@link StepPause}'s to decide.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import {
  type AgentClientMessage,
  AgentClientMessageSchema,
  type AgentServerMessage,
} from "../gen/agent/v1/agent_pb.js";
import {
  type ConversationStateStructure,
  ConversationStateStructureSchema,
} from "../gen/agent/v1/conversation_state_pb.js";
import type { ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import type { InteractionUpdate, ToolCallCompletedUpdate } from "../gen/agent/v1/interaction_pb.js";
import type { KvServerMessage } from "../gen/agent/v1/kv_pb.js";
import { checkpointBytes, type RunStream } from "../protocol/cursor/cursor-api.js";
import type { BlobStore } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { ArgumentStreams, type DropListener, type DropReason } from "./argument-streams.js";
import { argsToolCallId, completedToolOutcome } from "./completed-tool-call.js";
import { completedCursorToolEvent } from "./cursor-tool-events.js";
import { type ExecContext, handleExec, type PendingCall, resultReplies } from "./exec-handler.js";
import { answerInteractionQuery, INTERACTION_REJECTION_REASON, modeSwitchRequestOf } from "./interaction-query.js";
import { getBlobAnswer, setBlobAnswer } from "./kv-answer.js";
import type { ToolOutput } from "./native-results.js";
import { RunLiveness, type RunLivenessHost, type RunLivenessTimings } from "./run-liveness.js";
import { StepPause, type StepPauseHost, type StepPauseTimings } from "./step-pause.js";
import { subagentSteps, taskOf } from "./subagent-steps.js";
import { execToolCallId, todosOf } from "./surface-exec.js";
import { SurfaceExecRunner } from "./surface-exec-runner.js";
import type { TurnChannel } from "./turn-channel.js";
import { unexpectedCancelAsConnectionLoss } from "./turn-setup.js";
import { type TurnEndedUsage, turnEndedUsage } from "./turn-usage.js";
import type { WebToolPolicy } from "./web-tools.js";

/** Timing knobs of a session: those of its heartbeats and stall watchdog, and those of its step pause. */
export type SessionTimings = RunLivenessTimings & StepPauseTimings;

/** Options of {@link RunSession}. */
export interface RunSessionOptions {
  stream: RunStream;
  channel: TurnChannel;
  exec: ExecContext & { takenToolCallIds: Set<string> };
  blobs: BlobStore;
  logger: Logger;
  timings: SessionTimings;
  /** Decides web search / fetch queries and counts them for the turn (shared by every Run of the turn). */
  web?: WebToolPolicy;
  /** Called with every checkpoint, serialized and parsed. */
  onCheckpoint(bytes: Uint8Array, state: ConversationStateStructure): void;
  /** Called when Cursor names the model a router picked (`routed_model`, addendum 2 §4). */
  onRoutedModel?(displayName: string): void;
}

/** A `partial_tool_call` or `tool_call_started`. */
type FormingUpdate = Extract<InteractionUpdate["message"], { case: "partialToolCall" | "toolCallStarted" }>;

const message = (init: Parameters<typeof create<typeof AgentClientMessageSchema>>[1]) =>
  create(AgentClientMessageSchema, init);

/** The pump, replies and timers of one Run stream. */
export class RunSession implements DropListener, StepPauseHost, RunLivenessHost {
  /** Calls awaiting the caller's results, by tool-call id, in arrival order. */
  readonly pending = new Map<string, PendingCall>();
  /**
   * Calls handed to the caller that Cursor closed on its own before their result arrived (an exec `abort`, or a
   * `tool_call_completed` reporting an error, §4.6), by tool-call id → Cursor's explanation. The caller still owes a
   * result (its history holds the call), but Cursor no longer takes one.
   */
  readonly settled = new Map<string, string>();
  /** Cursor's tool calls started and not completed yet (by `call_id`): a stream cut now cuts one open (T7). */
  readonly openCalls = new Set<string>();
  /** The server asked for a blob we do not have (the next failure is then a "Blob not found", §4.4). */
  missingBlob = false;
  /** Σ token_delta since the last reset (§4.6). */
  outputTokens = 0;
  /** `token_details.used_tokens` of the latest checkpoint. */
  usedTokens: number | undefined;
  /** Cursor's counts from `turn_ended` (addendum 2 §3), when it sent any. */
  turnUsage: TurnEndedUsage | undefined;
  /** `routed_model.display_name` (addendum 2 §4), when Cursor named the model a router picked. */
  routedModel: string | undefined;
  /** `performance.now()` of the last real progress; the watchdogs compare against it instead of re-arming. */
  lastProgressAt = 0;
  /** Heartbeats and the stall watchdog. */
  private readonly liveness: RunLiveness;
  private closed = false;
  /** Execs the turn's surface executor runs (ACP); undefined without one. */
  private readonly surfaceExecs: SurfaceExecRunner | undefined;
  /** Client tool calls whose arguments stream before their exec. */
  private readonly argumentStreams: ArgumentStreams;
  /** When the segment pauses on a step's tool calls. */
  private readonly stepPause: StepPause;
  readonly done: Promise<void>;

  constructor(private readonly options: RunSessionOptions) {
    this.argumentStreams = new ArgumentStreams(options.exec, this);
    this.stepPause = new StepPause(this, options.timings, options.logger);
    const executor = options.exec.executor;
    this.surfaceExecs =
      executor === undefined
        ? undefined
        : new SurfaceExecRunner(
            executor,
            (replies) => this.send(replies),
            // Only a failed send gets here (the Run's channel failed, which ends the turn by itself).
            (error) => this.options.logger.debug("An exec's answer could not be sent", { error }),
          );
    this.liveness = new RunLiveness(this, options.timings, this.surfaceExecs);
    this.done = this.pump();
  }

  get stream(): RunStream {
    return this.options.stream;
  }

  /** Client tool calls whose arguments are forming in front of the caller ({@link StepPause}). */
  get formingCalls(): number {
    return this.argumentStreams.open;
  }

  /** Starts (or stops) the stall watchdog: on while the caller waits for output, off while parked. */
  setStallWatch(active: boolean): void {
    this.liveness.setStallWatch(active);
  }

  /** Sends messages in order; a failed send fails the channel. */
  send(messages: readonly AgentClientMessage[]): Promise<void> {
    // One message (every kv answer, most exec replies) without an async loop: each send of a turn would otherwise
    // cost an async frame and an iterator (about 0.3 KB).
    const only = messages.length === 1 ? messages[0] : undefined;
    return only === undefined ? this.sendEach(messages) : this.sendOne(only);
  }

  private async sendEach(messages: readonly AgentClientMessage[]): Promise<void> {
    for (const item of messages) await this.sendOne(item);
  }

  private sendOne(item: AgentClientMessage): Promise<void> {
    try {
      return this.options.stream.send(item).catch((error: unknown) => this.sendFailed(error));
    } catch (error) {
      return this.sendFailed(error);
    }
  }

  /** A send failed: the channel fails with the mapped error, which the send rejects with. */
  private sendFailed(error: unknown): Promise<never> {
    const mapped = ProxyError.from(error, "backend_unavailable");
    this.options.channel.fail(mapped);
    return Promise.reject(mapped);
  }

  /** Delivers the caller's outputs for the given pending calls (result(s) + stream_close each). */
  async deliver(outputs: ReadonlyArray<readonly [PendingCall, ToolOutput]>): Promise<void> {
    for (const [call, output] of outputs) {
      this.pending.delete(call.toolCallId);
      await this.send(resultReplies(call, output));
    }
  }

  /** `conversation_action.cancel_action`, half-close, a short grace for the server to end, then abort. */
  async cancel(graceMs: number): Promise<void> {
    if (this.closed) return;
    const cancel = message({
      message: { case: "conversationAction", value: { action: { case: "cancelAction", value: {} } } },
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    // Both waits share one grace period, so a stream that accepts nothing cannot hold the turn open.
    const sent = this.options.stream.send(cancel).then(
      () => this.options.stream.closeSend(),
      () => undefined,
    );
    await Promise.race([sent.then(() => this.done), grace]);
    clearTimeout(timer);
    this.close();
  }

  /** Releases timers and the stream. Idempotent. */
  close(reason?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.surfaceExecs?.close();
    this.liveness.close();
    this.stepPause.close();
    this.options.stream.abort(reason);
  }

  private async pump(): Promise<void> {
    try {
      for await (const item of this.options.stream.messages()) {
        // Most messages are handled synchronously; only a reply that must be sent in order is awaited.
        const replying = this.handle(item);
        if (replying !== undefined) await replying;
      }
      this.options.channel.push({ type: "end" });
    } catch (error) {
      const mapped = ProxyError.from(error, "backend_unavailable");
      // A cancel we did not send is the server (or a proxy) resetting the stream: connection loss (turn-setup.ts).
      this.options.channel.fail(this.closed ? mapped : (unexpectedCancelAsConnectionLoss(mapped) as ProxyError));
    } finally {
      this.liveness.stop();
      this.stepPause.stop();
    }
  }

  /** Real progress (§4.2): only a timestamp, so a busy stream does not re-arm a timer per message. */
  progress(): void {
    this.lastProgressAt = performance.now();
  }

  /** No progress for `ms` while the caller waits ({@link RunLiveness}): true when held calls went out instead. */
  stalled(ms: number): boolean {
    // Only a call's arguments that stopped forming, or calls Cursor listed that never came (when the idle check
    // did not end that wait first), hold back calls that are complete: hand those out instead (Cursor may be
    // waiting for their results).
    if (this.stepPause.holdsCompleteCalls()) {
      this.stepPause.listedCallsMissing({ stallTimeoutMs: ms });
      this.argumentStreams.dropAll("the stream stalled");
      this.stepPause.pauseNow();
      return true;
    }
    this.options.logger.warn("Run stalled: no progress from Cursor", { stallTimeoutMs: ms });
    this.options.channel.fail(
      new ProxyError("timeout", `Cursor made no progress for ${ms} ms (heartbeats only).`, { detail: "stalled" }),
    );
    return false;
  }

  private handle(item: AgentServerMessage): Promise<void> | undefined {
    const m = item.message;
    if (m.case === "interactionUpdate") {
      this.handleUpdate(m.value);
      return;
    }
    this.progress();
    switch (m.case) {
      case "kvServerMessage":
        // Answered without waiting for the stream to take the answer: a rebuild's thousands of get_blob_args are
        // then read and answered back to back (sends are written in call order; a failed send fails the channel
        // inside send()).
        this.send([this.answerKv(m.value)]).catch(() => undefined);
        return;
      case "execServerMessage":
        return this.handleExecMessage(m.value);
      case "conversationCheckpointUpdate": {
        this.usedTokens = m.value.tokenDetails?.usedTokens ?? this.usedTokens;
        // The bytes as received when they are the ones toBinary writes for this value (turn-decode.ts), else encoded.
        const bytes = checkpointBytes(m.value) ?? toBinary(ConversationStateStructureSchema, m.value);
        this.options.onCheckpoint(bytes, m.value);
        return;
      }
      case "execServerControlMessage": {
        if (m.value.message.case !== "abort") return;
        const execId = m.value.message.value.id;
        this.surfaceExecs?.abort(execId);
        for (const call of this.pending.values()) {
          if (call.execId === execId) this.settle(call, "Cursor cancelled this tool call before its result arrived.");
        }
        this.options.logger.debug("Cursor aborted an exec", { execId });
        return;
      }
      case "interactionQuery": {
        const query = m.value.query;
        // A surface that decides mode switches (ACP asks its user) answers when it has decided; Cursor waits.
        if (
          query.case === "switchModeRequestQuery" &&
          this.surfaceExecs?.switchMode(m.value.id, modeSwitchRequestOf(query.value)) === true
        ) {
          return;
        }
        return this.send([
          message({
            message: {
              case: "interactionResponse",
              value: answerInteractionQuery(m.value, INTERACTION_REJECTION_REASON, this.options.web),
            },
          }),
        ]);
      }
      case undefined:
        return;
    }
  }

  /** An exec: answered here, run by the surface, or a call handed to the caller (exec-handler.ts). */
  private handleExecMessage(exec: ExecServerMessage): Promise<void> | undefined {
    const outcome = handleExec(exec, this.options.exec, this.argumentStreams);
    // Only a tool's exec names a tool call (the request context and hooks do not).
    const execCallId = execToolCallId(exec.message);
    this.stepPause.execCame(execCallId);
    if (outcome.kind === "answered") {
      // A tool call refused here (no equivalent among the caller's tools) is one of the step's calls, in.
      if (execCallId !== "") this.stepPause.unseenCallIn(true);
      return this.send(outcome.replies);
    }
    this.liveness.startExecHeartbeats();
    if (outcome.kind === "run") {
      this.options.exec.takenToolCallIds.add(outcome.toolCallId);
      const start = () => this.surfaceExecs?.start(exec, outcome.exec, outcome.toolCallId);
      // An MCP call starts after its streamed arguments reached the surface (which shows them in order).
      if (outcome.exec.kind === "mcp") this.options.channel.push({ type: "run", start });
      else start();
      return;
    }
    this.options.exec.takenToolCallIds.add(outcome.call.toolCallId);
    this.pending.set(outcome.call.toolCallId, outcome.call);
    this.options.channel.push({ type: "event", event: outcome.event });
    this.stepPause.callHandedOut(outcome.call.cursorCallId);
  }

  private handleUpdate(update: InteractionUpdate): void {
    const u = update.message;
    if (u.case === "heartbeat" || u.case === undefined) return;
    this.progress();
    const channel = this.options.channel;
    switch (u.case) {
      case "textDelta":
        if (u.value.text !== "") channel.push({ type: "event", event: { type: "text-delta", text: u.value.text } });
        return;
      case "thinkingDelta":
        if (u.value.text !== "")
          channel.push({ type: "event", event: { type: "reasoning-delta", text: u.value.text } });
        return;
      case "thinkingCompleted":
        channel.push({ type: "event", event: { type: "reasoning-end", durationMs: u.value.thinkingDurationMs } });
        return;
      case "tokenDelta":
        this.outputTokens += u.value.tokens;
        return;
      case "toolCallDelta": {
        const delta = u.value.toolCallDelta?.delta;
        if (delta?.case !== "taskToolCallDelta") return;
        for (const step of subagentSteps(delta.value.interactionUpdate)) {
          channel.push({ type: "event", event: { type: "subagent", taskCallId: u.value.callId, step } });
        }
        return;
      }
      case "toolCallCompleted":
        this.toolCallCompleted(u.value);
        return;
      case "partialToolCall":
      case "toolCallStarted":
        this.toolCallForming(u);
        return;
      case "toolRequestsListed":
        this.stepPause.listed(u.value.callCount);
        return;
      case "stepStarted":
        this.stepPause.stepStarted(u.value.stepId);
        return;
      case "stepCompleted":
        this.stepPause.stepCompleted(u.value.stepId);
        return;
      case "routedModel":
        if (u.value.displayName !== "") {
          this.routedModel = u.value.displayName;
          this.options.onRoutedModel?.(u.value.displayName);
        }
        return;
      case "turnEnded":
        // Nothing the turn still had forming will be completed.
        this.argumentStreams.dropAll("the turn ended");
        this.turnUsage = turnEndedUsage(u.value);
        this.liveness.turnEnded();
        channel.push({ type: "turn-ended" });
        return;
      default:
        return;
    }
  }

  /** `tool_call_completed`. */
  private toolCallCompleted(update: ToolCallCompletedUpdate): void {
    this.openCalls.delete(update.callId);
    this.closeArguments(update.callId);
    this.stepPause.callCompleted(update.callId, update.toolCall);
    // A subagent's end, a web search's or fetch's outcome (a todos call is not one of these).
    const event = completedCursorToolEvent(update.callId, update.toolCall, this.options.web);
    if (event !== undefined) {
      this.options.channel.push({ type: "event", event });
      return;
    }
    const todos = this.options.exec.executor?.onTodos === undefined ? undefined : todosOf(update.toolCall);
    if (todos !== undefined) this.options.exec.executor?.onTodos?.(todos);
    // Server-side tool failures (read/edit errors, web search, task, todos, lints…) decode; say what failed.
    const outcome = update.toolCall === undefined ? undefined : completedToolOutcome(update.toolCall);
    if (outcome?.isError !== true) return;
    this.options.logger.debug("Cursor reports a failed tool call", { ...outcome });
    // A failure of a call the caller still holds: Cursor settled it without our result. The call is named by the
    // envelope's id or by the one its args carry, which need not be equal (§4.10).
    const ids = new Set([update.callId, update.toolCall === undefined ? "" : argsToolCallId(update.toolCall)]);
    ids.delete("");
    for (const call of this.pending.values()) {
      if (ids.has(call.cursorCallId)) this.settle(call, outcome.text);
    }
  }

  /** `partial_tool_call` and `tool_call_started`: a call forming. */
  private toolCallForming(u: FormingUpdate): void {
    if (u.case === "toolCallStarted" && u.value.callId !== "") this.openCalls.add(u.value.callId);
    const task = u.case === "toolCallStarted" ? taskOf(u.value.toolCall) : undefined;
    if (task !== undefined) {
      const step = { kind: "started" as const, description: task.description };
      this.options.channel.push({ type: "event", event: { type: "subagent", taskCallId: u.value.callId, step } });
      return;
    }
    const tool = u.value.toolCall?.tool;
    // Only MCP calls carry argument text (native tools none, T2); a surface with an executor (ACP) shows them too.
    if (tool?.case !== "mcpToolCall") return;
    const argsText = u.case === "partialToolCall" ? u.value.argsTextDelta : "";
    const open = this.argumentStreams.open;
    const event = this.argumentStreams.update(u.value.callId, tool.value, argsText);
    if (event !== undefined) this.options.channel.push({ type: "event", event });
    // The update may drop a call shown forming (its `mcp_args` came first).
    this.stepPause.releaseHeldPause(open);
  }

  /**
   * Moves a pending call to {@link settled}: no exec heartbeats, no result sent for it. The segment ends at once (a
   * pause), so what Cursor says next waits for the caller's result instead of following an unanswered call.
   */
  private settle(call: PendingCall, explanation: string): void {
    this.pending.delete(call.toolCallId);
    this.settled.set(call.toolCallId, explanation);
    this.stepPause.pauseAtOnce();
    this.options.logger.info("Cursor closed a tool call before its result arrived", {
      toolCallId: call.toolCallId,
      explanation,
    });
  }

  private answerKv(kv: KvServerMessage): AgentClientMessage {
    const { blobs, logger } = this.options;
    if (kv.message.case === "getBlobArgs") {
      const data = blobs.get(kv.message.value.blobId);
      if (data === undefined) {
        this.missingBlob = true;
        logger.warn("Cursor asked for a blob this conversation no longer has", { blobs: blobs.size });
      }
      return getBlobAnswer(kv.id, data);
    }
    if (kv.message.case === "setBlobArgs") blobs.set(kv.message.value.blobId, kv.message.value.blobData);
    return setBlobAnswer(kv.id);
  }

  /** Ends the segment on the calls handed out ({@link StepPause}). */
  pushPause(): void {
    this.options.channel.push({ type: "pause" });
  }

  /**
   * A call whose arguments the caller saw forming will not reach it as a call (argument-streams.ts, `reason`): the
   * segment does not wait for it, and the turn drops what it holds of it.
   */
  argumentsDropped(toolCallId: string, reason: DropReason): void {
    this.options.logger.debug("Dropping a tool call the caller saw forming", { toolCallId, reason });
    this.options.channel.push({ type: "dropped", toolCallId });
  }

  /** A completion closes a call whose arguments were still forming. */
  private closeArguments(callId: string): void {
    const open = this.argumentStreams.open;
    this.argumentStreams.complete(callId);
    this.stepPause.releaseHeldPause(open);
  }
}
