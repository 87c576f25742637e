/**
 * The liveness timers of one Run stream: client heartbeats every 5 s (docs/protocol.md §4.2) plus exec heartbeats for
 * the execs still running (§5.1), and the stall watchdog (server heartbeats are not progress, §4.2), which hands a
 * stall to its session ({@link RunLivenessHost}).
 */
import { create } from "@bufbuild/protobuf";
import { type AgentClientMessage, AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import type { RunStream } from "../protocol/cursor/cursor-api.js";
import { execHeartbeat, type PendingCall } from "./exec-handler.js";
import type { SurfaceExecRunner } from "./surface-exec-runner.js";

/** How often current clients heartbeat a running exec (cursor-protocol-addendum-2.md §6). */
const EXEC_HEARTBEAT_INTERVAL_MS = 3000;

/** Timing knobs of a {@link RunLiveness} (part of `SessionTimings`, run-session.ts). */
export interface RunLivenessTimings {
  /** `client_heartbeat` interval (docs/protocol.md §4.2: 5 s). */
  heartbeatIntervalMs: number;
  /**
   * Exec heartbeat interval for every exec still running (§5.1: current clients send one every 3 s). Default: 3 s,
   * or the client heartbeat's interval when that is shorter.
   */
  execHeartbeatIntervalMs?: number;
  stallTimeoutMs: number;
}

/** What a {@link RunLiveness} needs of its session (RunSession implements it, so the timers hold no closures). */
export interface RunLivenessHost {
  readonly stream: RunStream;
  /** Calls awaiting the caller's results (their execs are running). */
  readonly pending: ReadonlyMap<string, PendingCall>;
  /** `performance.now()` of the last real progress. */
  readonly lastProgressAt: number;
  /** Stamps progress now. */
  progress(): void;
  /**
   * No progress for `stallTimeoutMs` while the caller waits: true when the session handed out what it held back
   * instead of failing the Run (the watch goes on), false when it failed the Run.
   */
  stalled(stallTimeoutMs: number): boolean;
}

/** The heartbeats and the stall watchdog of one Run stream. */
export class RunLiveness {
  private readonly heartbeat: ReturnType<typeof setInterval>;
  /** Started by the first exec that runs (most turns run none: no timer per turn for them). */
  private execHeartbeat: ReturnType<typeof setInterval> | undefined;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private stallActive = false;
  private closed = false;

  constructor(
    private readonly host: RunLivenessHost,
    private readonly timings: RunLivenessTimings,
    /** Execs the turn's surface executor runs (ACP); undefined without one. */
    private readonly surfaceExecs: SurfaceExecRunner | undefined,
  ) {
    this.heartbeat = setInterval(() => this.sendHeartbeats(), timings.heartbeatIntervalMs);
    this.heartbeat.unref?.();
  }

  /** Starts (or stops) the stall watchdog: on while the caller waits for output, off while parked. */
  setStallWatch(active: boolean): void {
    this.stallActive = active;
    if (active) {
      this.host.progress();
      if (this.stallTimer === undefined && !this.closed) this.armStallCheck(this.timings.stallTimeoutMs);
    } else this.clearStallCheck();
  }

  /** Heartbeats the running execs from now on, every 3 s (or the configured interval); once per session. */
  startExecHeartbeats(): void {
    if (this.execHeartbeat !== undefined || this.closed) return;
    const timings = this.timings;
    const interval =
      timings.execHeartbeatIntervalMs ?? Math.min(EXEC_HEARTBEAT_INTERVAL_MS, timings.heartbeatIntervalMs);
    this.execHeartbeat = setInterval(() => this.sendExecHeartbeats(), interval);
    this.execHeartbeat.unref?.();
  }

  /** The turn ended: no more heartbeats (the exec heartbeats do not start again either). */
  turnEnded(): void {
    clearInterval(this.heartbeat);
    clearInterval(this.execHeartbeat);
  }

  /** The stream ended: the watchdog stops. */
  stop(): void {
    this.clearStallCheck();
  }

  /** The session closed: every timer stops for good. */
  close(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    clearInterval(this.execHeartbeat);
    this.clearStallCheck();
  }

  /**
   * One timer per stall period: when it fires, the watchdog fails the channel if nothing progressed for the whole
   * timeout, and otherwise sleeps again until the timeout after the last progress.
   */
  private armStallCheck(delayMs: number): void {
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      if (!this.stallActive || this.closed) return;
      const ms = this.timings.stallTimeoutMs;
      const remaining = this.host.lastProgressAt + ms - performance.now();
      // An exec the surface runs (the editor asking its user, a long command) is the client's time, not a stall.
      if ((this.surfaceExecs?.active ?? 0) > 0) {
        this.host.progress();
        this.armStallCheck(ms);
        return;
      }
      // Timers have millisecond resolution: under 1 ms left counts as elapsed.
      if (remaining >= 1) {
        this.armStallCheck(Math.ceil(remaining));
        return;
      }
      if (this.host.stalled(ms)) {
        this.host.progress();
        this.armStallCheck(ms);
      }
    }, delayMs);
  }

  private clearStallCheck(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  private sendHeartbeats(): void {
    this.host.stream
      .send(create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } }))
      .catch(() => undefined);
  }

  /** One heartbeat for every exec still running: calls held by the caller, and the surface's execs. */
  private sendExecHeartbeats(): void {
    const beats: AgentClientMessage[] = [];
    for (const call of this.host.pending.values()) beats.push(execHeartbeat(call.execId));
    if (this.surfaceExecs !== undefined) beats.push(...this.surfaceExecs.heartbeats());
    for (const beat of beats) this.host.stream.send(beat).catch(() => undefined);
  }
}
