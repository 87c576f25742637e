/**
 * How the first segment of a turn opens its Run (docs/protocol.md §4.4, §5.4): load the stored conversation and
 * choose the plan, write the Run's request, and open it again when a failure before anything reached the caller's
 * client is recoverable (turn-recovery.ts). It owns what only the first segment needs (the caller's history, the
 * plan, the recovery counters), so its turn lets go of all of it at once when it parks.
 */
import type { RunStream } from "../protocol/cursor/cursor-api.js";
import type { BlobStore } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { historyFingerprint } from "./history-fingerprint.js";
import { buildRunRequest, rebuildPlan, systemPromptOf, type TurnPlan } from "./run-request.js";
import type { RunSession } from "./run-session.js";
import { sanitizeToolName, type ToolNameMap } from "./tool-names.js";
import type { TurnDependencies } from "./turn-dependencies.js";
import { type RecoveryState, recoverFirstSegment } from "./turn-recovery.js";
import { loadTurnPlan, openRunWithDeadline } from "./turn-setup.js";
import type { AgentModeName, HistoryMessage, ModelSelection, TurnRequest } from "./types.js";

/** Which of Cursor's tools the model may use (docs/protocol.md §2.1). */
const ALLOWED_TOOLS_HEADER = "x-cursor-agent-allowed-tools";

/** What a {@link TurnOpening} needs of its turn (CursorAgentTurn implements it, so the opening keeps no closures). */
export interface TurnOpeningHost {
  readonly conversationId: string;
  /** Cursor's output of the first segment began: only connection loss is retried after it (turn-recovery.ts). */
  readonly outputStarted: boolean;
  /** The turn's tool names as the model sees them. */
  readonly toolNames: ToolNameMap;
  /** The blobs of the turn's Runs and checkpoints: the stored conversation's once its plan was loaded. */
  blobs: BlobStore;
  /** The Run the turn's current session reads (undefined without one). */
  readonly sessionStream: RunStream | undefined;
  /** Takes the turn's current session away (undefined when it has none), to be closed by the opening. */
  takeSession(): RunSession | undefined;
  /** Starts the turn's session on the Run being opened. */
  startSession(stream: RunStream, systemPrompt: string): void;
}

/** What a turn's first segment needs to open its Run; released when the turn parks. */
export class TurnOpening {
  /** The caller's history (planning, opening, rebuilding). */
  private readonly history: readonly HistoryMessage[];
  /**
   * Where the caller's `historyKeys` of {@link history} are read, when first needed ({@link keys}): the engine's
   * request hashes them on demand.
   */
  private readonly keySource: Pick<TurnRequest, "historyKeys">;
  /** Called with each Run's `x-request-id` as it opens. */
  private readonly onRunOpened: ((runId: string) => void) | undefined;
  /** `x-cursor-agent-allowed-tools` of every Run of the turn; undefined = no header. */
  private readonly allowedTools: string | undefined;
  private readonly mode: AgentModeName | undefined;
  /** The conversation id was minted for this turn: its first open reads nothing from the store. */
  private readonly newConversation: boolean;
  private plan: TurnPlan | undefined;
  private readonly recovery: RecoveryState = { refreshed: false, rebuilt: false, connectionRetries: 0 };

  constructor(
    private readonly host: TurnOpeningHost,
    request: TurnRequest,
    private readonly model: ModelSelection,
    private readonly deps: TurnDependencies,
    private readonly logger: Logger,
  ) {
    this.history = request.messages;
    this.keySource = request;
    this.onRunOpened = request.onRunOpened;
    this.allowedTools = request.allowedTools === undefined ? undefined : request.allowedTools.join(",");
    this.mode = request.mode;
    this.newConversation = request.newConversation === true;
  }

  /** The caller's keys of {@link history}, when it gave them for these messages. */
  private keys(): readonly string[] | undefined {
    const keys = this.keySource.historyKeys;
    return keys?.length === this.history.length ? keys : undefined;
  }

  /** What a saved checkpoint covers (the history's length and the fingerprint of its end). */
  checkpointKey(): { coveredMessages: number; fingerprint: string } {
    return {
      coveredMessages: this.history.length,
      fingerprint: this.keys()?.at(-1) ?? historyFingerprint(this.history),
    };
  }

  /** Opens the Run, again as long as each failure is recoverable ({@link recover}). */
  async open(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      try {
        return await this.openAttempt(signal);
      } catch (error) {
        if (signal?.aborted === true || !(await this.recover(error, signal))) throw error;
      }
    }
  }

  /** Closes the turn's session and says whether the first segment may open a new Run after `error`. */
  recover(error: unknown, signal: AbortSignal | undefined): Promise<boolean> {
    const session = this.host.takeSession();
    session?.close();
    return recoverFirstSegment(ProxyError.from(error), {
      state: this.recovery,
      afterOutput: this.host.outputStarted,
      missingBlob: session?.missingBlob ?? false,
      continuing: this.plan !== undefined && this.plan.kind !== "rebuild",
      rebuild: () => {
        this.plan = rebuildPlan(this.history);
      },
      tokenSource: this.deps.tokenSource,
      renewClientVersion: this.deps.renewClientVersion,
      retry: this.deps.retry,
      logger: this.logger,
      signal,
    });
  }

  /** Starts the turn's session on `stream`, closing one started on a Run that did not open. */
  private startOn(stream: RunStream, systemPrompt: string): void {
    this.host.takeSession()?.close();
    this.host.startSession(stream, systemPrompt);
  }

  private async openAttempt(signal: AbortSignal | undefined): Promise<void> {
    const host = this.host;
    let plan = this.plan;
    if (plan === undefined) {
      // A new conversation reads no record, so its plan needs no keys.
      const loaded = await loadTurnPlan(
        this.newConversation ? undefined : this.deps.store,
        host.conversationId,
        this.history,
        this.logger,
        this.newConversation ? undefined : this.keys(),
      );
      plan = loaded.plan;
      this.plan = plan;
      host.blobs = loaded.blobs;
    }
    const modelId = this.model.modelId;
    const first = buildRunRequest({
      plan,
      conversationId: host.conversationId,
      model: this.model,
      blobs: host.blobs,
      messageId: this.deps.newId(),
      modelToolName: (name) => host.toolNames.toModel(name) ?? sanitizeToolName(name),
      mode: this.mode,
    });
    const systemPrompt = systemPromptOf(this.history);
    // The session starts on an HTTP/2 Run as soon as its request has left, in the wait for Cursor's answer: its
    // answer and the first messages (request_context_args, which Cursor waits on before the first token) often come
    // together, and are then read at once instead of after the session was set up.
    const stream = await openRunWithDeadline(
      this.deps.api,
      first,
      signal,
      this.deps.timings.stallTimeoutMs,
      this.recovery.freshConnection === true,
      this.allowedTools === undefined ? undefined : { [ALLOWED_TOOLS_HEADER]: this.allowedTools },
      (sent) => this.startOn(sent, systemPrompt),
    );
    // An HTTP/1.1 Run (a fallback included), or a caller's API that does not say when the request left.
    if (host.sessionStream !== stream) this.startOn(stream, systemPrompt);
    this.onRunOpened?.(stream.requestId);
    this.logger.debug("Run opened", { transport: stream.transport, plan: plan.kind, modelId, run: stream.requestId });
  }
}
