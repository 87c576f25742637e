/**
 * The conversation engine's public contract: the surface-neutral turn request every API surface (OpenAI Chat
 * Completions, Anthropic Messages, OpenAI Responses, the OpenCode plugin) translates its wire format into, and the
 * neutral event stream it translates back. Plain data only: no I/O, no protobuf, no wire format of any surface.
 *
 * A surface never decides how a conversation reaches Cursor (resume a parked turn, continue from a checkpoint, start
 * new), never parks, remembers or expires anything: it calls {@link Engine.startTurn} and writes the events out.
 */
import type {
  AgentModeName,
  BackendEvent,
  ClientTool,
  HistoryToolCall,
  ListModelsOptions,
  ModelChoice,
  ModelInfo,
  ModelSelection,
  ReasoningEffort,
  ServerTools,
  SurfaceExecutor,
} from "../backend/types.js";

/** One part of a user message. Image bytes are raw (surfaces decode base64 / data URLs before calling the engine). */
export type MessagePart = { type: "text"; text: string } | { type: "image"; mimeType: string; data: Uint8Array };

/**
 * A reasoning block the client echoes back in an assistant message (Anthropic `thinking`, Responses `reasoning`).
 * Carried opaquely: the history key ignores it, so a client that re-sends it differently (or not at all) still
 * continues the same conversation.
 */
export interface ReasoningBlock {
  text: string;
  /** Opaque payload the client sent back (signature, encrypted_content); never interpreted by the engine. */
  opaque?: string;
}

/** One message of the conversation in the engine's neutral form. */
export type ConversationMessage =
  | { role: "user"; parts: MessagePart[] }
  | { role: "assistant"; text: string; reasoning: ReasoningBlock[]; toolCalls: HistoryToolCall[] }
  | {
      role: "tool";
      toolCallId: string;
      content: string;
      isError: boolean;
      /** Where the request gave this result's call id, in its door's words (a 400 names it); default chat's. */
      param?: string;
    }
  /**
   * An instruction placed inside the message list (OpenAI `system`/`developer` messages, Claude Code's rewritten
   * system reminders, Responses `developer` items). Instructions, not history: the history key ignores them.
   */
  | { role: "system"; text: string };

/** How the client constrained tool use. Cursor cannot force a call; the engine turns a constraint into an instruction. */
export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** Per-request options that change how the turn runs, not which conversation it belongs to. */
export interface TurnOptions {
  /** Whether thinking output is wanted at all. */
  reasoning: boolean;
  reasoningEffort: ReasoningEffort | undefined;
  toolChoice: ToolChoice;
  /**
   * Effort, thinking, fast and context as the person chose them, in the kit's one vocabulary
   * (src/surfaces/kit/model-choice.ts); the engine maps them onto the parameters the model defines.
   */
  choice?: ModelChoice;
}

/** The surface-neutral request for one turn. */
export interface EngineRequest {
  /** The model id or alias the client asked for; the engine resolves it (404 `model_not_found` if unknown). */
  model: string;
  /** System instructions from the request's top level (`system`, `instructions`), in order. Not part of history. */
  instructions: string[];
  /** The whole conversation as the client sent it, ending with the new user message or tool results. */
  messages: ConversationMessage[];
  /** Tools the client declares and executes itself. */
  tools: ClientTool[];
  /**
   * Server-side tools the client offered (web search / fetch, run by Cursor); absent = none, and Cursor's web
   * queries are rejected.
   */
  serverTools?: ServerTools;
  options: TurnOptions;
  /**
   * Runs Cursor's native and MCP execs on the surface's side while the Run stays open (ACP, where the bridge is the
   * editor's agent). Without it, native execs are redirected to `tools` (the turn parks) or rejected.
   */
  executor?: SurfaceExecutor;
  /** Cursor's agent mode (ACP `session/set_mode`). @default "agent" */
  mode?: AgentModeName;
  /**
   * The client receives the answer in one piece once the turn's segment ends (a non-streaming HTTP response), so
   * nothing reaches it before then: the engine holds the events back until the end, and a connection to Cursor that
   * drops mid-answer is retried instead of failing the request (docs/protocol.md §4.2). @default false (the events
   * reach the client as they come)
   */
  wholeAnswer?: boolean;
  /**
   * The client takes one tool call per answer (OpenAI `parallel_tool_calls: false`, Anthropic
   * `disable_parallel_tool_use`): an answer ends at its first tool call, and further calls Cursor makes in the same
   * step follow one per answer (SegmentOptions.oneToolCall). @default false
   */
  oneToolCallPerAnswer?: boolean;
  /**
   * The named Cursor account the turn runs on (the team gateway binds each virtual key to one, issue #29); absent =
   * the default account. A turn never moves to another account.
   */
  account?: string;
  /**
   * Whose conversations the turn may continue: the team gateway's virtual key id. A key's turns are indexed apart
   * from every other key's (and from the operator's), so two people who sent the same messages and got the same
   * answer never continue each other's conversation (whose state holds the other's system prompt). Absent = the
   * operator's own index.
   */
  owner?: string;
}

/** How a turn reached Cursor; the access log's `turn` field. */
export type TurnRoute = "new" | "continued" | "resumed" | "replayed";

/** A started turn whose first event has already arrived (early upstream failures reject `startTurn` instead). */
export interface EngineTurn {
  route: TurnRoute;
  /** The resolved model. */
  model: ModelInfo;
  /**
   * What the turn sent as its model (base id, parameters, max mode) and the id with variant suffix it runs as;
   * undefined on a replayed answer.
   */
  selection?: ModelSelection;
  /**
   * The turn's events up to and including `turn-end` (reason `tool-calls` means the turn is parked for the
   * client's results). The engine records the history and parks the turn itself when the stream completes;
   * abandoning the iteration early cancels the turn.
   */
  events: AsyncIterable<BackendEvent>;
  /** True once the turn ended parked on tool calls (read it after consuming the events; the access log's `parked`). */
  readonly parked?: boolean;
  /**
   * The id of the model that served the turn: the one Cursor named (`routed_model`, e.g. for `auto`), mapped from
   * its display name through the model list, else the selected variant's id (`claude-opus-4-8-thinking-high`);
   * undefined when neither is known (use the requested model then). Read
   * it when the response's `model` is written: after the first event, and again at the end.
   */
  readonly servedModel?: string | undefined;
}

/**
 * What the request log needs to explain a turn, filled in by the engine as it learns it (so a turn that fails before
 * its first event still names its conversation and Run).
 */
export interface TurnTrace {
  /** The bridge's request id, carried into the turn's debug lines ("Run opened"). */
  readonly requestId?: string;
  /** The Cursor conversation the turn belongs to, once routed. */
  conversationId?: string | undefined;
  /** The upstream Run (its `x-request-id`), once one is open for the turn. */
  runId?: string | undefined;
}

/** How a turn is started besides its request. */
export interface StartTurnOptions {
  /** The request was forwarded by another instance: run it here, never forward it again. */
  forwarded?: boolean;
  /** Filled in with the conversation and Run as the engine learns them (the request log's `conv=` and `run=`). */
  trace?: TurnTrace;
  /**
   * The request's input estimate the caller made already (`requestInputEstimate`, input-estimate.ts): the engine
   * counts through it, so a request is counted once. @default the engine makes its own when it needs one
   */
  inputEstimate?: () => number;
}

/**
 * Several instances sharing one store: tool-call ids name the instance holding the parked turn, and a result for a
 * turn parked elsewhere is run there (the composition root injects the HTTP implementation).
 */
export interface TurnForwarder {
  /** The other instance that handed out these tool-call ids; undefined when they are this instance's (or unknown). */
  ownerOf(toolCallIds: readonly string[]): string | undefined;
  /** Runs the request on `owner` and relays its turn; undefined when the owner is gone (run it here instead). */
  forward(owner: string, request: EngineRequest, signal: AbortSignal): Promise<EngineTurn | undefined>;
  /**
   * Tells `owner` that the conversation moved on past these tool calls without their results: a turn it holds parked
   * on them (for the same virtual key and account) is closed there, as a local one is here. Best effort: it resolves
   * (to how many were closed, undefined when the owner could not be told) and never rejects.
   */
  release?(owner: string, release: ParkedRelease, signal: AbortSignal): Promise<number | undefined>;
}

/** Which parked turns a {@link TurnForwarder.release} closes: those parked on these calls, of this key and account. */
export interface ParkedRelease {
  toolCallIds: string[];
  /** EngineRequest.owner of the request that moved on (only that key's turns are closed). */
  owner?: string | undefined;
  /** EngineRequest.account of that request (the engine of that account holds the turn). */
  account?: string | undefined;
}

/** The one conversation engine behind every surface. */
export interface Engine {
  /** Routes (resumed / continued / new / replayed), starts the turn and waits for its first event. */
  startTurn(request: EngineRequest, signal: AbortSignal, options?: StartTurnOptions): Promise<EngineTurn>;
  /** The models; `account` names whose (named Cursor accounts, issue #29), absent = the default account's. */
  listModels(signal?: AbortSignal, account?: string, options?: ListModelsOptions): Promise<ModelInfo[]>;
}
