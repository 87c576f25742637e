/**
 * The parts of a turn that run before and between segments: loading the stored conversation and choosing the plan
 * (docs/protocol.md §5.4), opening a Run with a deadline, and matching the caller's results to pending calls.
 */
import type { AgentClientMessage } from "../gen/agent/v1/agent_pb.js";
import type { CursorApi, RunStream } from "../protocol/cursor/cursor-api.js";
import { createBlobStore } from "../stores/memory/blob-store.js";
import type { BlobStore, ConversationStore } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import type { PendingCall } from "./exec-handler.js";
import type { ToolOutput } from "./native-results.js";
import { missingCheckpointBlobs, planTurn, rebuildPlan, type TurnPlan } from "./run-request.js";
import type { HistoryMessage, ToolResult } from "./types.js";

const MISSING_RESULT = "No result was provided for this tool call.";

/**
 * Loads the conversation record and decides between continuing from its checkpoint and rebuilding. `store` undefined:
 * the conversation is new, nothing is stored under its id (no read at all).
 */
export async function loadTurnPlan(
  store: ConversationStore | undefined,
  conversationId: string,
  messages: readonly HistoryMessage[],
  logger: Logger,
  historyKeys?: readonly string[],
): Promise<{ plan: TurnPlan; blobs: BlobStore }> {
  const record = await store?.load(conversationId).catch((error: unknown) => {
    logger.warn("Could not load the stored conversation; rebuilding from history", { error });
    return undefined;
  });
  const blobs = createBlobStore(record?.blobs);
  let plan = planTurn(messages, record, historyKeys);
  if (plan.kind !== "rebuild" && missingCheckpointBlobs(plan.checkpoint, blobs) > 0) {
    logger.warn("Stored checkpoint references missing blobs; rebuilding the state from the full history");
    plan = rebuildPlan(messages);
  } else if (plan.kind === "continue-turn") {
    logger.info("Tool results for a turn that is no longer open; continuing it from the stored checkpoint", {
      steps: plan.turn.steps.length,
    });
  } else if (record !== undefined && plan.kind === "rebuild") {
    logger.info("History does not extend the stored checkpoint; rebuilding the state from the full history", {
      resume: messages.at(-1)?.role === "tool",
    });
  }
  return { plan, blobs };
}

/**
 * A `canceled` failure we did not ask for (the server reset the stream, e.g. HTTP/2 RST_STREAM CANCEL) is connection
 * loss from the client's point of view: retryable before output, an error after it.
 */
export function unexpectedCancelAsConnectionLoss(error: unknown): unknown {
  if (!(error instanceof ProxyError) || error.code !== "canceled") return error;
  return new ProxyError("backend_unavailable", "Cursor reset the Run stream.", {
    cause: error,
    retryable: true,
    detail: "stream_reset",
  });
}

/**
 * Opens a Run whose lifetime is its own, not the caller's signal: a parked turn outlives the request that started it.
 * The caller's signal and a deadline (no answer at all counts as a stall, §4.2) only bound the open: openRun watches
 * both (OpenRunOptions `signal`, `deadlineMs`) with no controller of its own; once open, the Run is ended with its
 * `abort()` (RunSession.close), and neither the stream nor anything else keeps the signal, a timer or a listener.
 */
export async function openRunWithDeadline(
  api: CursorApi,
  first: AgentClientMessage,
  signal: AbortSignal | undefined,
  deadlineMs: number,
  freshConnection = false,
  headers?: Readonly<Record<string, string>>,
  onRequestSent?: (stream: RunStream) => void,
): Promise<RunStream> {
  signal?.throwIfAborted();
  try {
    return await api.openRun(first, { signal, deadlineMs, freshConnection, headers, onRequestSent });
  } catch (error) {
    // The deadline's `timeout` passes unchanged; a `canceled` the caller did not ask for is a reset stream.
    throw signal?.aborted === true ? error : unexpectedCancelAsConnectionLoss(error);
  }
}

/**
 * Pairs the calls the caller was shown with its results. A shown call without a result is answered as an error so
 * the server never waits forever; results for calls we are not waiting for are reported back as a count.
 */
export function matchResults(
  announced: readonly string[],
  pending: ReadonlyMap<string, PendingCall>,
  results: readonly ToolResult[],
): { outputs: Array<readonly [PendingCall, ToolOutput]>; unknown: number } {
  const byId = new Map(results.map((result) => [result.toolCallId, result]));
  const outputs: Array<readonly [PendingCall, ToolOutput]> = [];
  for (const id of announced) {
    const call = pending.get(id);
    if (call === undefined) continue;
    const result = byId.get(id);
    outputs.push([call, result === undefined ? { content: MISSING_RESULT, isError: true } : result]);
  }
  const unknown = results.filter((result) => !announced.includes(result.toolCallId)).length;
  return { outputs, unknown };
}
