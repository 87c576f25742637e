/**
 * When a segment pauses on a step's tool calls (docs/protocol.md §4.6): the step's calls counted against
 * `tool_requests_listed.call_count`, the tool-call batch window when Cursor gives no count, and the idle check of a
 * step whose listed calls have not all come. One per Run; its session ({@link StepPauseHost}) tells it what came and
 * ends the segment when it says so.
 */
import type { ToolCall } from "../gen/agent/v1/tool_calls_pb.js";
import type { Logger } from "../util/logger.js";
import { argsToolCallId } from "./completed-tool-call.js";

/** Default of {@link StepPauseTimings.listedCallsIdleMs}. */
export const DEFAULT_LISTED_CALLS_IDLE_MS = 3000;

/** Timing knobs of a {@link StepPause} (part of `SessionTimings`, run-session.ts). */
export interface StepPauseTimings {
  toolBatchWindowMs: number;
  /**
   * While fewer of a step's calls than `tool_requests_listed.call_count` said are in, and calls are waiting for the
   * caller: no real progress for this long hands those out (docs/protocol.md §4.6). Any progress (the next call
   * forming, its argument deltas, tokens) restarts it. @default 3000 ({@link DEFAULT_LISTED_CALLS_IDLE_MS})
   */
  listedCallsIdleMs?: number;
}

/** What a {@link StepPause} needs of its session (RunSession implements it, so the pause holds no closures). */
export interface StepPauseHost {
  /** Calls awaiting the caller's results. */
  readonly pending: ReadonlyMap<string, unknown>;
  /** `performance.now()` of the last real progress (§4.2). */
  readonly lastProgressAt: number;
  /** Client tool calls whose arguments are forming in front of the caller (argument-streams.ts). */
  readonly formingCalls: number;
  /** Ends the segment on the calls handed out. */
  pushPause(): void;
}

/** Decides when the segment ends on the calls of a step handed to the caller. */
export class StepPause {
  private batchTimer: ReturnType<typeof setTimeout> | undefined;
  /** Counts windows armed and cancelled, so a window's deferred end that another call overtook does nothing. */
  private windowGeneration = 0;
  /**
   * `tool_requests_listed.call_count` of the current step (cursor-protocol-addendum-2.md §4) and the step's calls in:
   * handed to the caller, answered here (a native tool the caller has no equivalent of), or completed without an
   * exec. While fewer are in, no batch window cuts the step short: the segment pauses once all are in (or the step
   * completes, or Cursor makes no progress for a while, {@link armListedIdleCheck}). The window is the fallback only
   * when Cursor does not say.
   */
  private listedCalls: number | undefined;
  private listedCallsIn = 0;
  /**
   * The calls that came as execs (handed out or answered here) while no count was pending, since the last of the
   * step's bounds: `step_started`, the current step's `step_completed`, a count met or given up, or a pause. The wire
   * reference does not fix where `tool_requests_listed` comes among the step's calls, so a count that comes after some
   * of them counts these (docs/protocol.md §4.6). A pause bounds them for a Cursor that sends no steps: a next step
   * starts only once the caller answered the calls that went out. When the window ended the segment before a late
   * count came, the step's calls that went out are not counted (the wait then ends as a wrong count's does, or the
   * step's `step_completed` drops the count). A call Cursor completes without an exec is not among these: where its
   * completion comes relative to the count is not known either.
   */
  private unlistedCalls = 0;
  /**
   * The idle check of a step whose listed calls have not all come ({@link armListedIdleCheck}): one timer, armed when
   * the wait starts and re-armed from the last progress when it fires, as the stall watchdog is.
   */
  private listedIdleTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * The ids of the tool calls that came as execs on this Run (their args' `tool_call_id`, and the call id of those
   * handed to the caller): a completion naming none of them is a call Cursor ran without one (§4.6).
   */
  private readonly execCallIds = new Set<string>();
  /** Calls were handed to the caller since the last pause: the segment is to end once the step's calls are all in. */
  private awaitingPause = false;
  /** The last `step_started`'s id, and the step the calls awaiting a pause came in (addendum 2 §4). */
  private currentStep: bigint | undefined;
  private callsStep: bigint | undefined;
  /** The session closed: a check already due does nothing. */
  private closed = false;

  constructor(
    private readonly host: StepPauseHost,
    private readonly timings: StepPauseTimings,
    private readonly logger: Logger,
  ) {}

  /** `tool_requests_listed`: how many calls the step makes (none counted when Cursor says 0). */
  listed(callCount: number): void {
    if (callCount <= 0) {
      this.listedCalls = undefined;
      return;
    }
    this.listedCalls = callCount;
    // The step's calls that came before the count are among those it counts: it may end the step at once.
    this.listedCallsIn = this.unlistedCalls;
    this.unlistedCalls = 0;
    this.callsMayBeIn();
  }

  /** `step_started`. */
  stepStarted(stepId: bigint): void {
    this.currentStep = stepId;
    this.unlistedCalls = 0;
  }

  /** `step_completed`. */
  stepCompleted(stepId: bigint): void {
    // Calls that come after it are a later step's (one that came before is the current one's, if another step ends).
    // With no calls waiting, a count still pending is moot: one that came after the window ended the step (none of
    // its calls counted) would otherwise end the next step at its first calls.
    if (stepId === this.currentStep) {
      this.unlistedCalls = 0;
      if (!this.awaitingPause) this.listedCalls = undefined;
    }
    // The step the waiting calls came in is over, so it makes no more calls: pause without the window. Where
    // Cursor sends this (before or after the results, before or after a forming call's `mcp_args`) is not known;
    // after them, nothing is waiting for it. A call still forming is not dropped here: its `mcp_args` may follow.
    if (this.awaitingPause && this.callsStep !== undefined && stepId === this.callsStep) {
      this.listedCalls = undefined;
      this.pauseNow();
    }
  }

  /** A tool's exec came on this Run, naming the tool call `toolCallId` ("" for none). */
  execCame(toolCallId: string): void {
    if (toolCallId !== "") this.execCallIds.add(toolCallId);
  }

  /** A call was handed to the caller (already pending); `cursorCallId` is Cursor's id of it, "" when unknown. */
  callHandedOut(cursorCallId: string): void {
    if (cursorCallId !== "") this.execCallIds.add(cursorCallId);
    if (!this.awaitingPause) this.callsStep = this.currentStep;
    this.awaitingPause = true;
    this.stepCallIn();
  }

  /** `tool_call_completed`. */
  callCompleted(callId: string, toolCall: ToolCall | undefined): void {
    // A call that ran without an exec (Cursor's own tools, or one it gave up forming) is one of the step's calls.
    // Inferred, not in the reference: that `call_count` counts such calls too (docs/protocol.md §4.6).
    if (!this.cameAsExec(callId, toolCall)) this.unseenCallIn(false);
  }

  /**
   * A call of the step that the caller will not get is in. It counts toward `call_count` only (one that comes later
   * too, when it came as an exec: `asExec`): without a count it leaves the batch window alone, as it always did.
   */
  unseenCallIn(asExec: boolean): void {
    if (this.listedCalls !== undefined) this.stepCallIn();
    else if (asExec) this.unlistedCalls++;
  }

  /** Cursor closed a call the caller holds: the segment ends at once, whatever else the step makes. */
  pauseAtOnce(): void {
    this.cancelBatchWindow();
    this.paused();
  }

  /** Calls handed out wait for a call still forming in front of the caller, or for listed calls still to come. */
  holdsCompleteCalls(): boolean {
    return (
      this.awaitingPause && (this.host.formingCalls > 0 || this.listedCalls !== undefined) && this.host.pending.size > 0
    );
  }

  /**
   * Ends the segment on the calls handed out, unless a client tool's arguments are still forming in front of the
   * caller: that call's `mcp_args` (or a completion closing it) ends the wait instead (§4.6).
   */
  pauseNow(): void {
    this.cancelBatchWindow();
    if (this.host.formingCalls > 0) return;
    this.paused();
  }

  /** Calls stopped forming in front of the caller (`open` of them were before): the last one lets a held pause through. */
  releaseHeldPause(open: number): void {
    if (open > 0 && this.host.formingCalls === 0 && this.awaitingPause) this.callsMayBeIn();
  }

  /** The step's listed calls are given up on (the idle check, or the stall watchdog): the calls that came go out. */
  listedCallsMissing(after: { idleMs: number } | { stallTimeoutMs: number }): void {
    const listed = this.listedCalls;
    if (listed === undefined) return;
    this.listedCalls = undefined;
    this.logger.warn("Cursor listed more tool calls for the step than came; handing out those that did", {
      listed,
      came: this.listedCallsIn,
      ...after,
    });
  }

  /** Stops the timers (the stream ended). */
  stop(): void {
    this.cancelBatchWindow();
    this.clearListedIdleCheck();
  }

  /** Stops the timers for good (the session closed). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  /** Ends the segment on the calls handed out: the calls that came before it are no later step's. */
  private paused(): void {
    this.awaitingPause = false;
    this.unlistedCalls = 0;
    this.host.pushPause();
  }

  /** One of the step's calls is in: the segment ends once all are ({@link callsMayBeIn}). */
  private stepCallIn(): void {
    if (this.listedCalls === undefined) this.unlistedCalls++;
    else this.listedCallsIn++;
    this.callsMayBeIn();
  }

  /**
   * Ends the segment on the calls handed out once the step's calls are all in: at once when Cursor listed them all
   * (`call_count`), else after the batch window. While a listed call is still to come, no window runs: the step's
   * calls reach the caller as one message however far apart they come, unless Cursor goes idle first
   * ({@link armListedIdleCheck}).
   */
  private callsMayBeIn(): void {
    if (this.listedCalls !== undefined && this.listedCallsIn >= this.listedCalls) {
      this.listedCalls = undefined;
      if (this.awaitingPause) this.pauseNow();
    } else if (this.awaitingPause) {
      if (this.listedCalls === undefined) this.armBatchWindow();
      else {
        this.cancelBatchWindow();
        if (this.listedIdleTimer === undefined && this.host.pending.size > 0) {
          this.armListedIdleCheck(this.timings.listedCallsIdleMs ?? DEFAULT_LISTED_CALLS_IDLE_MS);
        }
      }
    }
  }

  /** A completed call came as an exec on this Run: by its envelope id or by the id its args carry (§4.10). */
  private cameAsExec(callId: string, toolCall: ToolCall | undefined): boolean {
    if (this.execCallIds.has(callId)) return true;
    const argsId = toolCall === undefined ? "" : argsToolCallId(toolCall);
    return argsId !== "" && this.execCallIds.has(argsId);
  }

  /**
   * Without `call_count`: the server batches a step's tool calls within 30 ms; the segment pauses once the window
   * (40 ms) passes quietly. Its end is decided after the event loop's I/O: a loop that was busy past the window runs
   * the due timer before it reads the sockets, and a call Cursor sent within the window may still wait unread; it then
   * joins the batch.
   */
  private armBatchWindow(): void {
    this.cancelBatchWindow();
    const generation = this.windowGeneration;
    this.batchTimer = setTimeout(() => {
      // Drop the fired timer so a parked session does not keep it.
      this.batchTimer = undefined;
      setImmediate(() => {
        if (generation === this.windowGeneration) this.pauseNow();
      });
    }, this.timings.toolBatchWindowMs);
  }

  private cancelBatchWindow(): void {
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    this.windowGeneration++;
  }

  /** Calls are waiting for the caller while fewer of the step's calls than Cursor listed are in. */
  private waitingForListedCalls(): boolean {
    return this.awaitingPause && this.listedCalls !== undefined && this.host.pending.size > 0;
  }

  /**
   * Listed calls that never come must not hold the calls that did until the stall watchdog: Cursor streams a call as
   * it forms it (partial tool calls, argument deltas, tokens), so once it made no progress for the idle period while
   * listed calls are missing, the count will not be met and the calls that came are handed out. Any progress before
   * then keeps the wait going, so calls far apart still reach the caller as one message. One timer: armed when the
   * wait starts, and when it fires re-armed for what is left after the last progress (the session's message loop only
   * stamps {@link StepPauseHost.lastProgressAt}). The check runs after the event loop's I/O, as the batch window's end
   * does, so a loop that was busy past the period first reads what Cursor sent in time. A call still forming in front
   * of the caller holds the segment by itself (§4.6); its end calls {@link callsMayBeIn}, which arms this check again.
   */
  private armListedIdleCheck(delayMs: number): void {
    this.listedIdleTimer = setTimeout(() => {
      setImmediate(() => {
        this.listedIdleTimer = undefined;
        if (this.closed || !this.waitingForListedCalls() || this.host.formingCalls > 0) return;
        const ms = this.timings.listedCallsIdleMs ?? DEFAULT_LISTED_CALLS_IDLE_MS;
        const remaining = this.host.lastProgressAt + ms - performance.now();
        // Timers have millisecond resolution: under 1 ms left counts as elapsed.
        if (remaining >= 1) {
          this.armListedIdleCheck(Math.ceil(remaining));
          return;
        }
        this.listedCallsMissing({ idleMs: ms });
        this.pauseNow();
      });
    }, delayMs);
  }

  private clearListedIdleCheck(): void {
    clearTimeout(this.listedIdleTimer);
    this.listedIdleTimer = undefined;
  }
}
