/**
 * An {@link AgentClient} whose real client is still being built: `serve` answers requests as soon as its HTTP app is
 * wired and loads the protocol code (protobuf registries, Connect, the embedded emulator) right after, so the first
 * `/health` does not wait for code only a turn needs (cli/serve-runtime.ts). A turn started before the client is
 * ready waits for it inside its first segment; once it is ready, every call goes straight to it. This module imports
 * no protocol code.
 */
import type {
  AgentClient,
  AgentTurn,
  AgentTurnStatus,
  BackendEvent,
  SegmentOptions,
  ToolResult,
  TurnRequest,
} from "./types.js";

/** A turn whose real turn starts once the client is ready (when its first segment is read). */
class PendingTurn implements AgentTurn {
  readonly conversationId: string;
  private inner: AgentTurn | undefined;
  private closedWith: { reason: string | undefined } | undefined;

  constructor(
    private readonly ready: Promise<AgentClient>,
    private readonly request: TurnRequest,
  ) {
    this.conversationId = request.conversationId;
  }

  get runId(): string | undefined {
    return this.inner?.runId;
  }

  get status(): AgentTurnStatus {
    if (this.inner !== undefined) return this.inner.status;
    return this.closedWith === undefined ? "new" : "ended";
  }

  get pendingToolCallIds(): readonly string[] {
    return this.inner?.pendingToolCallIds ?? [];
  }

  get routedModel(): string | undefined {
    return this.inner?.routedModel;
  }

  /** The real turn, started on the ready client (once). */
  private async start(): Promise<AgentTurn> {
    const client = await this.ready;
    this.inner ??= client.startTurn(this.request);
    // Closed while the client loaded: the real turn is closed the same way before its first read.
    if (this.closedWith !== undefined) await this.inner.close(this.closedWith.reason);
    return this.inner;
  }

  async *stream(signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent> {
    const turn = this.inner ?? (await this.start());
    yield* turn.stream(signal, options);
  }

  async *resume(results: ToolResult[], signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent> {
    const turn = this.inner ?? (await this.start());
    yield* turn.resume(results, signal, options);
  }

  async close(reason?: string): Promise<void> {
    if (this.inner !== undefined) return this.inner.close(reason);
    this.closedWith ??= { reason };
  }
}

/**
 * The client `ready` resolves to, usable at once: calls made before it resolves wait for it (and fail with its
 * error, should it reject); later ones go to it directly, without a wrapper.
 */
export function deferredAgentClient(ready: Promise<AgentClient>): AgentClient {
  let client: AgentClient | undefined;
  ready.then(
    (resolved) => {
      client = resolved;
    },
    () => {},
  );
  return {
    startTurn: (request) => (client === undefined ? new PendingTurn(ready, request) : client.startTurn(request)),
    listModels: async (signal, options) => (client ?? (await ready)).listModels(signal, options),
  };
}
