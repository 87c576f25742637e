/**
 * One user turn on one upstream Run (docs/protocol.md §4.4, §5.4), consumed in segments: a segment ends with
 * `turn-end` `stop`, or with `tool-calls` leaving the stream open (parked, heartbeats continue) until `resume()`
 * delivers the results on the same stream. The first segment retries connection loss while nothing has reached the
 * caller's client (docs/protocol.md §4.2), refreshes the token once on `unauthenticated`, and rebuilds the state once
 * when a checkpoint or blob is rejected (those two only before any output).
 */
import type { RunStream } from "../protocol/cursor/cursor-api.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { BlobStore } from "../stores/types.js";
import { ProxyError, toolCallCut, upstreamTruncated } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { resolveModelId } from "./models.js";
import { RunSession } from "./run-session.js";
import { type ClientReach, watchedExecutor } from "./surface-exec-runner.js";
import { type ToolNameMap, toolNameMapFor } from "./tool-names.js";
import { type ChannelItem, type ChannelWatcher, TurnChannel } from "./turn-channel.js";
import type { TurnDependencies } from "./turn-dependencies.js";
import { canceledBy, classifyTurnError, estimateWithTools, type HistorySize, historySize } from "./turn-errors.js";
import { TurnOpening, type TurnOpeningHost } from "./turn-opening.js";
import { assertTransition, inSegment, statusOf, type TurnPhase } from "./turn-phase.js";
import { EXPIRED_REASON } from "./turn-reasons.js";
import { matchResults } from "./turn-setup.js";
import { nothingReported, segmentUsage } from "./turn-usage.js";
import type {
  AgentTurn,
  AgentTurnStatus,
  BackendEvent,
  ClientTool,
  ModelSelection,
  SegmentOptions,
  SurfaceExecutor,
  ToolResult,
  TurnRequest,
} from "./types.js";
import { WebToolPolicy } from "./web-tools.js";

/** The close reason the parked-turn registry gives when a parked turn's TTL runs out. */
export { EXPIRED_REASON };

/** The AgentTurn implementation. */
export class CursorAgentTurn implements AgentTurn, ChannelWatcher, TurnOpeningHost, ClientReach {
  readonly conversationId: string;
  /** The `x-request-id` of the Run opened last. */
  runId: string | undefined;
  /**
   * What only the first segment needs to open its Run (the caller's history, the plan, the recovery counters, the
   * caller's `onRunOpened`): released when that segment parks, so a parked turn holds neither the whole conversation
   * nor a caller closure. Checkpoints keep what they need in {@link checkpointKey}.
   */
  private opening: TurnOpening | undefined;
  /** See turn-phase.ts for the phases and the allowed transitions. */
  private phase: TurnPhase = "new";
  /** Made on first use ({@link toolNames}); from the interned list once the first Run was opened. */
  private toolNameMap: ToolNameMap | undefined;
  private readonly logger: Logger;
  private readonly takenToolCallIds = new Set<string>();
  blobs: BlobStore = createBlobStore();
  private session: RunSession | undefined;
  /**
   * What the responses of this turn reported on the current Run (turn-usage.ts): the segment that ends the turn
   * reports Cursor's counts for the Run minus it. A new Run starts it over: its `turn_ended` counts only that Run.
   */
  private reported = nothingReported();
  /** The current segment's estimate of its request's input (SegmentOptions.inputEstimate). */
  private inputEstimate: (() => number) | undefined;
  private channel = new TurnChannel();
  /** Tool calls yielded to the caller in the current segment and not yet answered. */
  private announced: string[] = [];
  private saving: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  /** Called once when the turn ends or expires ({@link onEnd}). */
  private endListener: (() => void) | undefined;
  /** How many calls Cursor had closed on its own when the turn parked (a new one while parked ends it). */
  private settledAtPark = 0;
  /**
   * The turn ended upstream while parked: Cursor went on without the caller's results, so nothing it says from now on
   * (a checkpoint included) belongs to the conversation the caller continues. Set before the close completes.
   */
  private endedWhileParked = false;
  /** The current segment's events, held back until it ends (`holdEvents`); undefined when they are yielded at once. */
  private held: BackendEvent[] | undefined;
  /** Cursor's output of the first segment began (an event other than a checkpoint, yielded or held). */
  outputStarted = false;
  /**
   * Something of this turn reached the caller's client outside the events: an exec or a todo list handed to its
   * executor. A dropped connection is then never retried (the exec would run twice).
   */
  reachedClient = false;

  private readonly model: ModelSelection;
  /** The caller's tools; the interned list equal to them once the first Run was opened ({@link internTools}). */
  private tools: ClientTool[];
  private toolsInterned = false;
  /** Runs the turn's execs on the caller's side (ACP); undefined = redirect to caller tools or reject. */
  private readonly executor: SurfaceExecutor | undefined;
  /** Web search / fetch verdicts and counts for the whole turn (every Run and segment of it). */
  readonly web: WebToolPolicy;
  /** The history's part of the request's size estimate (turn-errors.ts), for a failure's classification. */
  private readonly historySize: HistorySize;
  /** What a saved checkpoint covers: computed once (checkpoints may arrive several times per turn). */
  private checkpointKey: { coveredMessages: number; fingerprint: string } | undefined;

  constructor(
    request: TurnRequest,
    private readonly deps: TurnDependencies,
  ) {
    this.conversationId = request.conversationId;
    this.model = request.selection ?? {
      modelId: resolveModelId(request.model),
      parameters: [],
      maxMode: false,
      ranAs: request.model,
    };
    this.tools = request.tools;
    this.executor = request.executor === undefined ? undefined : watchedExecutor(request.executor, this);
    this.web = new WebToolPolicy(request.serverTools);
    this.historySize = historySize(request.messages);
    this.logger = deps.logger.child(
      request.requestId === undefined
        ? { conversationId: request.conversationId }
        : { conversationId: request.conversationId, requestId: request.requestId },
    );
    this.opening = new TurnOpening(this, request, this.model, deps, this.logger);
  }

  get sessionStream(): RunStream | undefined {
    return this.session?.stream;
  }

  get toolNames(): ToolNameMap {
    this.toolNameMap ??= toolNameMapFor(this.tools);
    return this.toolNameMap;
  }

  /** Swaps the caller's tools for the shared list equal to them (see {@link TurnDependencies.internTools}). */
  private internTools(): void {
    if (this.toolsInterned) return;
    this.toolsInterned = true;
    const interned = this.deps.internTools?.(this.tools) ?? this.tools;
    if (interned === this.tools) return;
    this.tools = interned;
    if (this.toolNameMap !== undefined) this.toolNameMap = toolNameMapFor(interned);
  }

  get status(): AgentTurnStatus {
    return statusOf(this.phase);
  }

  get pendingToolCallIds(): readonly string[] {
    return this.phase === "parked" ? [...this.announced] : [];
  }

  /** Set by the session when Cursor sends `routed_model`; kept after the session closes. */
  routedModel: string | undefined;

  private moveTo(phase: TurnPhase): void {
    this.phase = assertTransition(this.phase, phase);
  }

  stream(signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent> {
    return this.segment(signal, undefined, options);
  }

  resume(results: ToolResult[], signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent> {
    return this.segment(signal, results, options);
  }

  close(reason = "closed"): Promise<void> {
    this.closing ??= this.shutdown(reason);
    return this.closing;
  }

  onEnd(listener: (() => void) | undefined): void {
    if (listener !== undefined && (this.phase === "ended" || this.phase === "expired")) {
      queueMicrotask(listener);
      return;
    }
    this.endListener = listener;
  }

  /**
   * What the Run's channel receives while the turn is parked (nobody reads it then): its failure or end, a
   * `turn_ended`, or a call the caller holds that Cursor closed on its own (an exec `abort`) means the Run went on, or
   * stopped, without the caller's results. The turn is closed at once, so the registry lets it go and the caller's
   * results continue the conversation from the checkpoint saved when it parked (docs/architecture.md, parked turns).
   * Calls of the step that arrive after the segment ended (their pause included) are not a reason.
   */
  channelNotice(item: ChannelItem | undefined): void {
    if (this.phase !== "parked") return;
    let reason: string | undefined;
    if (item === undefined) reason = "its Run failed";
    else if (item.type === "end") reason = "its Run ended";
    else if (item.type === "turn-ended") reason = "Cursor ended the turn";
    else if (item.type === "pause" && (this.session?.settled.size ?? 0) > this.settledAtPark) {
      reason = "Cursor closed a tool call the client holds";
    }
    if (reason === undefined) return;
    this.channel.watchItems(undefined);
    this.endedWhileParked = true;
    this.logger.info("Parked turn ended upstream; the tool results will continue it from its checkpoint", { reason });
    void this.close(`ended while parked: ${reason}`);
  }

  private async *segment(
    signal: AbortSignal | undefined,
    results: ToolResult[] | undefined,
    options: SegmentOptions | undefined,
  ): AsyncGenerator<BackendEvent> {
    this.enterSegment(results === undefined);
    this.held = options?.holdEvents === true ? [] : undefined;
    this.inputEstimate = options?.inputEstimate;
    const oneCall = options?.oneToolCall === true;
    /** With `oneCall`: calls whose arguments this segment showed and whose `tool-call` it has not yielded yet. */
    const forming = new Set<string>();
    try {
      if (results === undefined) await this.opener.open(signal);
      else await this.deliver(results);
      this.session?.setStallWatch(true);
      for (;;) {
        // Queued items are taken without a promise hop; only an empty channel waits (and handles failures).
        const item = this.channel.poll() ?? (await this.nextItem(signal, results === undefined));
        if (item === undefined) continue;
        if (item.type === "event") {
          const event = item.event;
          if (event.type === "tool-call") this.announced.push(event.toolCallId);
          if (event.type !== "checkpoint") this.outputStarted = true;
          if (this.held !== undefined) this.held.push(event);
          else {
            if (event.type !== "checkpoint" && this.phase === "opening") this.moveTo("streaming");
            yield event;
          }
          if (oneCall) {
            if (event.type === "tool-call-delta") forming.add(event.toolCallId);
            else if (event.type === "tool-call") {
              forming.delete(event.toolCallId);
              // One call per answer: end at this call, unless this segment already showed another call's arguments
              // forming (that call then ends it once complete); what came after it waits for the next segment.
              if (forming.size === 0 && this.session?.pending.has(event.toolCallId) === true) {
                yield* this.finishSegment("tool-calls");
                return;
              }
            }
          }
        } else if (item.type === "pause") {
          // Calls Cursor closed on its own still end the segment: the caller holds them and owes each a result.
          if (!this.announced.some((id) => this.session?.pending.has(id) || this.session?.settled.has(id))) continue;
          yield* this.finishSegment("tool-calls");
          return;
        } else if (item.type === "run") {
          item.start();
        } else if (item.type === "dropped") {
          forming.delete(item.toolCallId);
          this.dropUnfinishedCall(item.toolCallId);
        } else if (item.type === "turn-ended") {
          this.session?.stream.closeSend();
          yield* this.drainAndFinish(signal);
          return;
        } else {
          // The Run ended cleanly but Cursor never said the turn was over (cursor-protocol-addendum-3.md T7): the
          // answer was cut off, whether a tool call was open or not. Never a silent success.
          const session = this.session;
          const open = (session?.pending.size ?? 0) > 0 || (session?.openCalls.size ?? 0) > 0;
          throw upstreamTruncated(this.announced.length > 0 || open);
        }
      }
    } catch (error) {
      if (signal?.aborted === true) throw canceledBy(signal, error);
      throw classifyTurnError(ProxyError.from(error), {
        model: this.model.ranAs,
        estimatedTokens: estimateWithTools(this.historySize, this.tools),
        outputStarted: this.outputStarted,
      });
    } finally {
      this.held = undefined;
      this.channel.release();
      if (inSegment(this.phase)) await this.close(signal?.aborted === true ? "canceled" : "error");
    }
  }

  private enterSegment(first: boolean): void {
    if (!first) this.channel.watchItems(undefined);
    if (first ? this.phase !== "new" : this.phase !== "parked") {
      if (this.phase === "expired") {
        throw new ProxyError("not_found", "The parked turn expired.", { detail: "turn_expired" });
      }
      throw new ProxyError("invalid_request", first ? "stream() may be called once." : "The turn is not parked.");
    }
    this.moveTo(first ? "opening" : "streaming");
  }

  /**
   * The next channel item; on a recoverable failure of the first segment while nothing has reached the caller's
   * client (`opening`: no event yielded but checkpoints; held events are not yielded yet), starts the segment over on
   * a new Run and returns undefined.
   */
  private async nextItem(signal: AbortSignal | undefined, first: boolean) {
    try {
      return await this.channel.next(signal);
    } catch (error) {
      if (!first || this.phase !== "opening" || this.reachedClient || signal?.aborted === true) throw error;
      if (!(await this.opener.recover(error, signal))) throw error;
      // Start the segment over: what the failed Run produced never reached the caller.
      this.announced = [];
      if (this.held !== undefined) this.held = [];
      this.outputStarted = false;
      this.web.reset();
      await this.opener.open(signal);
      this.session?.setStallWatch(true);
      return undefined;
    }
  }

  /** The first segment's {@link opening}; only that segment asks for it. */
  private get opener(): TurnOpening {
    if (this.opening === undefined) throw new ProxyError("internal", "The turn's history was already released.");
    return this.opening;
  }

  takeSession(): RunSession | undefined {
    const session = this.session;
    this.session = undefined;
    return session;
  }

  startSession(stream: RunStream, systemPrompt: string): void {
    // After the Run's request was written: interning serialises every tool's schema.
    this.internTools();
    this.channel.release();
    this.channel = new TurnChannel();
    this.reported = nothingReported();
    this.session = new RunSession({
      stream,
      channel: this.channel,
      blobs: this.blobs,
      logger: this.logger,
      timings: this.deps.timings,
      exec: {
        environment:
          this.executor === undefined
            ? this.deps.environment
            : { ...this.deps.environment, workspacePath: this.executor.workspacePath },
        tools: this.tools,
        toolNames: this.toolNames,
        systemPrompt,
        takenToolCallIds: this.takenToolCallIds,
        // Bound methods, not arrow properties: tsx (esbuild keepNames) gives every named arrow its own `name`
        // property, hidden class and property store, which every parked turn would carry.
        newHex: this.newHex.bind(this),
        toolCallIdSuffix: this.deps.toolCallIdSuffix,
        executor: this.executor,
      },
      web: this.web,
      onCheckpoint: this.onCheckpoint.bind(this),
      onRoutedModel: this.onRoutedModel.bind(this),
    });
    this.runId = stream.requestId;
  }

  private onRoutedModel(displayName: string): void {
    this.routedModel = displayName;
    this.logger.debug("Cursor routed the turn", { displayName });
  }

  private newHex(): string {
    return this.deps.newId().replaceAll("-", "");
  }

  private checkpointKeyOf(): { coveredMessages: number; fingerprint: string } {
    this.checkpointKey ??= this.opener.checkpointKey();
    return this.checkpointKey;
  }

  private onCheckpoint(bytes: Uint8Array): void {
    if (this.endedWhileParked) return;
    const conversationId = this.conversationId;
    const { coveredMessages, fingerprint } = this.checkpointKeyOf();
    // One literal, not spreads of a partial record: a key added to a spread copy costs a fresh hidden class.
    this.saving = this.saving
      .then(() =>
        this.deps.store.save({
          conversationId,
          checkpoint: bytes,
          coveredMessages,
          fingerprint,
          blobs: this.blobs.snapshot(),
          updatedAt: this.deps.now(),
        }),
      )
      .catch((error: unknown) => this.logger.warn("Could not save the conversation checkpoint", { error }));
    this.channel.push({ type: "event", event: { type: "checkpoint", conversationId: this.conversationId } });
  }

  private async deliver(results: readonly ToolResult[]): Promise<void> {
    const session = this.session;
    if (session === undefined) throw new ProxyError("internal", "A parked turn has no open stream.");
    const { outputs, unknown } = matchResults(this.announced, session.pending, results);
    if (unknown > 0) this.logger.debug("Ignoring results for tool calls this turn is not waiting for", { unknown });
    const closed = this.announced.filter((id) => session.settled.delete(id));
    if (closed.length > 0) {
      this.logger.info("Not forwarding results of tool calls Cursor already closed", { toolCallIds: closed });
    }
    this.announced = [];
    await session.deliver(outputs);
  }

  /** After `turn_ended`, waits briefly for the end-of-stream (and a late checkpoint) before finishing. */
  private async *drainAndFinish(signal: AbortSignal | undefined): AsyncGenerator<BackendEvent> {
    const deadline = performance.now() + this.deps.timings.drainTimeoutMs;
    for (;;) {
      const item = await this.channel.nextDraining(deadline, signal, this.logger);
      if (item === undefined) break;
      if (item.type === "run") item.start();
      if (item.type === "dropped") this.dropUnfinishedCall(item.toolCallId);
      if (item.type !== "event") continue;
      if (this.held !== undefined) this.held.push(item.event);
      else yield item.event;
    }
    yield* this.finishSegment("stop");
  }

  /**
   * A call whose arguments were forming will not reach the caller as a call (argument-streams.ts): its pieces held back
   * for a whole answer are not handed out, and the answer ends on the complete calls. Streamed, the caller already has
   * its first pieces, which no door can take back (a chat client would run half-written arguments): the turn fails as
   * cut off instead.
   */
  private dropUnfinishedCall(toolCallId: string): void {
    const held = this.held;
    if (held === undefined) throw toolCallCut();
    this.held = held.filter((event) => event.type !== "tool-call-delta" || event.toolCallId !== toolCallId);
  }

  private async *finishSegment(reason: "stop" | "tool-calls"): AsyncGenerator<BackendEvent> {
    const held = this.held;
    this.held = undefined;
    if (held !== undefined) yield* held;
    const session = this.session;
    const usage = segmentUsage(session, this.reported, this.inputEstimate);
    // The estimate holds its request: a parked turn must keep none of it (the next segment brings its own).
    this.inputEstimate = undefined;
    if (session !== undefined) session.outputTokens = 0;
    await this.saving;
    yield { type: "usage", usage };
    if (reason === "tool-calls") {
      // Parked until resume() or close(); how long it may wait is the parked-turn registry's decision (one TTL).
      this.moveTo("parked");
      this.releaseSetup();
      session?.setStallWatch(false);
      this.settledAtPark = session?.settled.size ?? 0;
      this.channel.watchItems(this);
    } else {
      this.moveTo("ended");
      session?.close();
      this.session = undefined;
    }
    yield { type: "turn-end", reason };
  }

  /**
   * After the first segment nothing reopens or rebuilds the run (recovery is for the first segment only), so the
   * history and the plan (a continued checkpoint can be large) need not stay with a parked turn; later checkpoints
   * only need the key.
   */
  private releaseSetup(): void {
    if (this.opening === undefined) return;
    this.checkpointKeyOf();
    this.opening = undefined;
  }

  private async shutdown(reason: string): Promise<void> {
    const wasOpen = this.phase !== "ended" && this.phase !== "expired";
    // What Cursor says after a parked turn is closed (a checkpoint while it cancels) was never the caller's.
    if (this.phase === "parked") this.endedWhileParked = true;
    if (wasOpen) this.moveTo(this.phase === "parked" && reason === EXPIRED_REASON ? "expired" : "ended");
    if (this.phase === "expired") this.logger.info("Parked turn expired without tool results");
    this.channel.watchItems(undefined);
    const listener = this.endListener;
    this.endListener = undefined;
    listener?.();
    const session = this.session;
    this.session = undefined;
    if (session !== undefined && wasOpen) {
      this.logger.debug("Closing turn", { reason });
      await session.cancel(this.deps.timings.cancelGraceMs);
    }
    // Closing the session aborts the Run: nothing else holds it (openRunWithDeadline).
    session?.close();
    await this.saving;
  }
}
