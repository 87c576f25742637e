/**
 * Runs a turn's surface execs ({@link SurfaceExecutor}) while the Run stays open: exec heartbeats go out for every
 * exec in flight, an exec `abort` aborts its signal, and closing the Run aborts them all. The mode switches the
 * surface decides (its user may take a while) are waited for the same way.
 */
import { create } from "@bufbuild/protobuf";
import { type AgentClientMessage, AgentClientMessageSchema } from "../gen/agent/v1/agent_pb.js";
import type { ExecServerMessage } from "../gen/agent/v1/exec_pb.js";
import { execHeartbeat, execReply, streamClose } from "./exec-handler.js";
import { modeSwitchAnswer } from "./interaction-query.js";
import { surfaceResults } from "./surface-exec.js";
import type { ModeSwitchRequest, ModeSwitchVerdict, SurfaceExec, SurfaceExecResult, SurfaceExecutor } from "./types.js";

/**
 * The exec's replies and its stream's close. A result the conversion cannot take (a surface bug: content that is not
 * text) is answered as an error result saying so, never dropped: an unanswered exec would leave Cursor waiting.
 */
function answerOf(message: ExecServerMessage, result: SurfaceExecResult): AgentClientMessage[] {
  let results: ReturnType<typeof surfaceResults>;
  try {
    const text = result.kind === "rejected" ? result.reason : result.content;
    if (typeof text !== "string") throw new Error(`its ${typeof text} text is not a string`);
    results = surfaceResults(message.message, result);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const content = `The tool's result could not be sent to Cursor (${reason}).`;
    results = surfaceResults(message.message, { kind: "output", content, isError: true });
  }
  const replies = results.map((r) => execReply(message.id, message.execId, r));
  replies.push(streamClose(message.id));
  return replies;
}

/** Runs surface execs for one Run and sends their answers. */
export class SurfaceExecRunner {
  private readonly running = new Map<number, AbortController>();
  /** Mode switches the surface is deciding. */
  private readonly deciding = new Set<AbortController>();
  private closed = false;

  constructor(
    private readonly executor: SurfaceExecutor,
    private readonly send: (messages: readonly AgentClientMessage[]) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Execs and mode switches in flight (the stall watchdog waits while any is: the editor may be asking its user). */
  get active(): number {
    return this.running.size + this.deciding.size;
  }

  /**
   * Hands mode switch query `queryId` to the surface, whose verdict is sent when it decides (never after the Run
   * closed); false when the surface does not decide mode switches.
   */
  switchMode(queryId: number, request: ModeSwitchRequest): boolean {
    const decide = this.executor.switchMode?.bind(this.executor);
    if (decide === undefined) return false;
    const controller = new AbortController();
    this.deciding.add(controller);
    const answer = async (): Promise<void> => {
      let verdict: ModeSwitchVerdict;
      try {
        verdict = await decide(request, controller.signal);
      } catch (error) {
        const reason = `The mode switch could not be decided (${error instanceof Error ? error.message : String(error)}).`;
        verdict = { approved: false, reason };
      }
      this.deciding.delete(controller);
      if (controller.signal.aborted || this.closed) return;
      const response = modeSwitchAnswer(queryId, verdict);
      await this.send([
        create(AgentClientMessageSchema, { message: { case: "interactionResponse", value: response } }),
      ]);
    };
    answer().catch(this.onError);
    return true;
  }

  /** Starts one exec; its answer is sent when the surface resolves (never for an exec aborted meanwhile). */
  start(message: ExecServerMessage, exec: SurfaceExec, toolCallId: string): void {
    const controller = new AbortController();
    this.running.set(message.id, controller);
    const answer = async (): Promise<void> => {
      let result: SurfaceExecResult;
      try {
        result = await this.executor.run({ ...exec, toolCallId }, controller.signal);
      } catch (error) {
        result = { kind: "output", content: error instanceof Error ? error.message : String(error), isError: true };
      }
      if (controller.signal.aborted || this.closed) return;
      this.running.delete(message.id);
      await this.send(answerOf(message, result));
    };
    answer().catch(this.onError);
  }

  /** Exec heartbeats for the execs in flight (§5.1). */
  heartbeats(): AgentClientMessage[] {
    return [...this.running.keys()].map((id) => execHeartbeat(id));
  }

  /** Cursor aborted exec `execId`: abort its run; no answer is sent. */
  abort(execId: number): void {
    const controller = this.running.get(execId);
    this.running.delete(execId);
    controller?.abort(new Error("Cursor aborted this exec."));
  }

  /** The Run ended: abort every exec still running. */
  close(): void {
    this.closed = true;
    for (const controller of [...this.running.values(), ...this.deciding])
      controller.abort(new Error("The turn ended."));
    this.running.clear();
    this.deciding.clear();
  }
}

/** What {@link watchedExecutor} notes: something of the turn reached the caller's client (CursorAgentTurn). */
export interface ClientReach {
  reachedClient: boolean;
}

/** The caller's executor, noting in `reach` that the caller's client was reached. */
export function watchedExecutor(executor: SurfaceExecutor, reach: ClientReach): SurfaceExecutor {
  const onTodos = executor.onTodos?.bind(executor);
  const switchMode = executor.switchMode?.bind(executor);
  return {
    workspacePath: executor.workspacePath,
    run: (exec, signal) => {
      reach.reachedClient = true;
      return executor.run(exec, signal);
    },
    ...(switchMode === undefined
      ? {}
      : {
          switchMode: (request, signal) => {
            reach.reachedClient = true;
            return switchMode(request, signal);
          },
        }),
    ...(onTodos === undefined
      ? {}
      : {
          onTodos: (todos) => {
            reach.reachedClient = true;
            onTodos(todos);
          },
        }),
  };
}
