/**
 * Types shared by the agent client (backend/) and its callers (bridge/, session/, server/).
 * Plain data only: no I/O, no protobuf.
 */

import type { JsonValue } from "../util/json-value.js";

/** A JSON value as produced by JSON.parse (defined in util/ so the stores need not import the backend). */
export type { JsonValue };

/** A tool the caller (OpenAI client, OpenCode…) declares and executes itself. */
export interface ClientTool {
  /** Name exactly as the caller declared it; the agent client sanitises it for Cursor and maps it back. */
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: { [key: string]: JsonValue };
}

/** A tool call the assistant made in an earlier message of the history. */
export interface HistoryToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments. */
  arguments: string;
}

/** An image attached to a user message: raw bytes and the sniffed MIME type (png, jpeg, gif or webp). */
export interface ImageAttachment {
  mimeType: string;
  data: Uint8Array;
}

/** One message of the caller's conversation, already normalised from the wire format. */
export type HistoryMessage =
  | { role: "system"; content: string }
  /** `images`: attachments sent to Cursor as `SelectedImage`s of the user message; absent or empty = text only. */
  | { role: "user"; content: string; images?: readonly ImageAttachment[] }
  | { role: "assistant"; content: string; toolCalls: HistoryToolCall[] }
  /** `isError`: the client reported the tool failed (Anthropic `is_error`); a rebuilt state keeps the flag. */
  | { role: "tool"; toolCallId: string; content: string; isError?: boolean };

/** How the caller wants thinking output; the agent client only needs to know whether to request it. */
export type ReasoningEffort = "none" | "low" | "medium" | "high";

/** A client's limits on one server-side web tool (Anthropic `max_uses`, `allowed_domains`, `blocked_domains`). */
export interface WebToolLimits {
  /** Queries approved per turn at most; undefined = no limit. */
  maxUses?: number;
  /** Only these domains (and their subdomains); undefined or empty = any. */
  allowedDomains?: readonly string[];
  /** Never these domains (and their subdomains). */
  blockedDomains?: readonly string[];
}

/**
 * The server-side tools the caller offered: Cursor runs web search and fetch itself and asks first
 * (`web_search_request_query` / `web_fetch_request_query`); a query is approved only for an offered tool.
 */
export interface ServerTools {
  webSearch?: WebToolLimits;
  webFetch?: WebToolLimits;
}

/** One result of a web search Cursor ran (`WebSearchReference`). */
export interface WebReference {
  title: string;
  url: string;
  /** The excerpt Cursor gave the model. */
  chunk: string;
}

/** How a server-side web tool call ended: ran, refused by the bridge (or Cursor), or failed upstream. */
export type WebToolStatus = "completed" | "rejected" | "failed";

/** Everything needed to start (or continue) one user turn. */
export interface TurnRequest {
  /** Cursor model id as listed by listModels() (aliases such as `auto` already resolved by the caller or not). */
  model: string;
  /**
   * What `requested_model` sends (the engine's choice of base, parameters and max mode); absent = `model` as a flat
   * id with no parameters.
   */
  selection?: ModelSelection;
  /**
   * `x-cursor-agent-allowed-tools` for the turn's Runs: the ToolCall cases the model may use (`mcp_tool_call` = the
   * caller's own tools); absent = no header, every Cursor tool allowed.
   */
  allowedTools?: readonly string[];
  /**
   * Stable id of the conversation. The agent client keeps the latest checkpoint and blobs under it and continues
   * from them when `messages` extends what the checkpoint covers; otherwise it rebuilds state from `messages`.
   */
  conversationId: string;
  /**
   * The caller minted `conversationId` for this turn (a new conversation): nothing can be stored under it yet, so the
   * turn skips the store read (with the file store, a failed open per request on the hot path).
   */
  newConversation?: boolean;
  /** The whole conversation so far, ending with the new user message (or tool results). */
  messages: HistoryMessage[];
  /** Tools the caller can run. */
  tools: ClientTool[];
  /**
   * `historyKeyPrefixes(messages)` when the caller has already computed them (the engine has), so the turn does not
   * hash the whole history again; computed on demand otherwise.
   */
  historyKeys?: readonly string[];
  /** Server-side tools the caller offered; absent = every web search and fetch query is rejected. */
  serverTools?: ServerTools;
  /** The bridge request that started the turn, named in the turn's debug lines. */
  requestId?: string;
  /** Told the upstream Run's id (its `x-request-id`) each time the turn opens a Run. */
  onRunOpened?: (runId: string) => void;
  /**
   * Runs Cursor's execs (native and MCP) on the caller's side while the Run stays open, instead of the default
   * (redirect to a declared caller tool and park, or a typed rejection). ACP sets it: there the bridge is the agent.
   */
  executor?: SurfaceExecutor;
  /** Cursor's agent mode for the new user message. @default "agent" */
  mode?: AgentModeName;
}

/** Cursor's agent modes a caller may pick (`AgentMode`). */
export type AgentModeName = "agent" | "ask" | "plan";

/** One Cursor exec a surface runs itself, as plain data (docs/protocol.md §4.7 args, without protobuf). */
export type SurfaceExec =
  | { kind: "read"; path: string }
  | { kind: "write"; path: string; text: string }
  | { kind: "delete"; path: string }
  | { kind: "shell"; command: string; workingDirectory: string; timeoutMs: number | undefined }
  | { kind: "ls"; path: string }
  | { kind: "grep"; pattern: string; path: string | undefined; glob: string | undefined; caseInsensitive: boolean }
  | { kind: "glob"; pattern: string; path: string | undefined }
  | { kind: "fetch"; url: string }
  /** A call of a declared caller tool (an MCP tool definition); `toolName` is the caller's name. */
  | { kind: "mcp"; toolName: string; arguments: string };

/** How a surface answered an exec: text output (typed per exec like a caller tool's result), or a typed rejection. */
export type SurfaceExecResult =
  | { kind: "output"; content: string; isError: boolean; exitCode?: number }
  | { kind: "rejected"; reason: string };

/** Runs Cursor's execs for one turn (see {@link TurnRequest.executor}). */
export interface SurfaceExecutor {
  /** The workspace root Cursor is told about (RequestContext env). */
  readonly workspacePath: string;
  /** Runs one exec; `signal` aborts when Cursor aborts the exec or the turn ends. Never rejects for tool failures. */
  run(exec: SurfaceExec & { toolCallId: string }, signal: AbortSignal): Promise<SurfaceExecResult>;
  /** Cursor's agent updated its todo list (an `update_todos` tool call it runs itself). */
  onTodos?(todos: SurfaceTodo[]): void;
  /**
   * Cursor's model asks to switch the agent mode (`switch_mode_request_query`, docs/protocol.md §4.9): the surface
   * decides (ACP asks its user). Without it the switch is approved, as current clients do. `signal` aborts when the
   * turn ends. Never rejects: a failure is a rejection with its reason.
   */
  switchMode?(request: ModeSwitchRequest, signal: AbortSignal): Promise<ModeSwitchVerdict>;
}

/** What Cursor's model asks in a mode switch (`SwitchModeArgs`). */
export interface ModeSwitchRequest {
  /** Cursor's id of the mode it asks for (`agent`, `ask`, `plan`…), as sent. */
  targetModeId: string;
  explanation: string;
  /** The switch's tool call id (empty when Cursor sent none). */
  toolCallId: string;
}

/** The surface's answer to a mode switch. */
export type ModeSwitchVerdict = { approved: true } | { approved: false; reason: string };

/** One entry of Cursor's todo list. */
export interface SurfaceTodo {
  content: string;
  status: "pending" | "in_progress" | "completed" | "cancelled";
}

/** The caller's answer to one `tool-call` event. */
export interface ToolResult {
  toolCallId: string;
  /** Text output of the tool (for errors, the error text). */
  content: string;
  isError: boolean;
}

/**
 * Token counts of a response (docs/protocol.md §4.6). From Cursor's `TurnEndedUpdate` when the turn ended and Cursor
 * sent counts; otherwise (a response that ends on tool calls before the turn does, or a server that sends no counts)
 * estimated: output = Σ token_delta, input = the checkpoint's context size minus that, the rest 0.
 */
export interface Usage {
  /** Every prompt token, cache reads and writes included (OpenAI's `prompt_tokens`). */
  inputTokens: number;
  /** Every generated token, reasoning included (OpenAI's `completion_tokens`). */
  outputTokens: number;
  totalTokens: number;
  /*
   * The breakdown below is optional so that hand-made usages (tests, forwarded turns of an older instance) stay
   * valid: absent means 0 / estimated. The agent client always sets every field.
   */
  /** Prompt tokens read from Cursor's prompt cache (part of inputTokens). */
  cacheReadTokens?: number;
  /** Prompt tokens written to the prompt cache (part of inputTokens). */
  cacheWriteTokens?: number;
  /** Reasoning tokens (part of outputTokens). */
  reasoningTokens?: number;
  /** `cursor`: Cursor's own counts for the turn; `estimate`: derived as above. */
  source?: "cursor" | "estimate";
}

/** Why a turn segment ended. `tool-calls`: the turn is parked until the caller resumes it with results. */
export type TurnEndReason = "stop" | "length" | "tool-calls";

/** Events produced by the agent client, named noun-verb; every payload field is required. */
export type BackendEvent =
  | { type: "text-delta"; text: string }
  | { type: "reasoning-delta"; text: string }
  | { type: "reasoning-end"; durationMs: number }
  | { type: "tool-call"; toolCallId: string; toolName: string; arguments: string }
  /**
   * A client tool's arguments as Cursor forms them, before its `tool-call` (same id): `argumentsText` is the whole
   * text so far, not a delta (cursor-protocol-addendum-3 T1); the `tool-call` carries the final arguments.
   */
  | { type: "tool-call-delta"; toolCallId: string; toolName: string; argumentsText: string }
  /**
   * A web search Cursor ran (or that was refused); `error` is empty on success, `references` empty otherwise.
   * `offered: false`: the request offered no search tool, so the bridge refused it and surfaces show nothing of it.
   */
  | {
      type: "web-search";
      toolCallId: string;
      query: string;
      status: WebToolStatus;
      references: WebReference[];
      error: string;
      offered?: boolean;
    }
  /** A web fetch Cursor ran (or that was refused); `markdown` is the page, `error` empty on success. */
  | {
      type: "web-fetch";
      toolCallId: string;
      url: string;
      status: WebToolStatus;
      markdown: string;
      error: string;
      offered?: boolean;
    }
  /**
   * Cursor's task tool ran a subagent (cursor-protocol-addendum-3 T4): its start, each nested tool call it made,
   * its text and its end, in order. `taskCallId` is the task's tool call id.
   */
  | { type: "subagent"; taskCallId: string; step: SubagentStep }
  | { type: "usage"; usage: Usage }
  | { type: "checkpoint"; conversationId: string }
  | { type: "turn-end"; reason: TurnEndReason };

/** One step of a subagent's run, as a {@link BackendEvent} of type `subagent` carries it. */
export type SubagentStep =
  | { kind: "started"; description: string }
  | {
      kind: "tool";
      toolCallId: string;
      title: string;
      toolKind: "read" | "edit" | "delete" | "search" | "execute" | "fetch" | "other";
      status: "started" | "completed" | "failed";
    }
  | { kind: "text"; text: string }
  | { kind: "ended"; failed: boolean };

/** Model metadata as the agent client reports it. */
export interface ModelInfo {
  id: string;
  displayName: string;
  aliases: string[];
  reasoning: boolean;
  maxMode: boolean;
  /** Accepts image input (Cursor's AvailableModels answer, else a family table; config overrides win). */
  vision: boolean;
  /**
   * A parameterised base model (docs/protocol.md §6.1): its parameters with every value it offers, in wire order.
   * Absent on flat ids and on models Cursor describes without parameters.
   */
  parameters?: ModelParameterInfo[];
  /** A base model's default (non-max) variant: its values and its id. */
  defaults?: { params: Readonly<Record<string, string>>; variant: string | undefined };
  /** A flat variant id (`gpt-5.5-high-fast`): its base model and values. */
  variant?: { base: string; params: Readonly<Record<string, string>>; maxMode: boolean };
  /** Context window in tokens, when Cursor says it (AvailableModels); null when it does not. */
  contextWindow?: number | null;
}

/** One parameter of a base model (`thinking`, `effort`, `reasoning`, `context`, `fast`); values are wire strings. */
export interface ModelParameterInfo {
  id: string;
  values: string[];
}

/**
 * What the person chose besides the model id, in one vocabulary for every door (the kit's mapping table,
 * src/surfaces/kit/model-choice.ts); the engine maps it onto the parameters the model defines.
 */
export interface ModelChoice {
  /** An effort tier: `effort` or `reasoning`, whichever the model defines, clamped to the nearest tier it offers. */
  effort?: EffortTier;
  /** Extended thinking, where the model has a `thinking` parameter. */
  thinking?: boolean;
  /** The fast variant (otherwise `fast=false` is sent to models that have the parameter). */
  fast?: boolean;
  /** A context tier (`1m`): must be one the model offers. */
  context?: string;
  /**
   * A context tier to run where the model offers it and to leave out elsewhere, as Anthropic treats its
   * `context-1m-*` beta (Claude Code sends it for every request of a `[1m]` model, background ones included).
   */
  contextIfOffered?: string;
}

/** Effort tiers, lowest first (`xhigh` is spelled `extra-high` by some models). */
export const EFFORT_TIERS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
/** One effort tier. */
export type EffortTier = (typeof EFFORT_TIERS)[number];

/** What a turn sends as its model: `requested_model{model_id, parameters, max_mode}`, never `model_details`. */
export interface ModelSelection {
  /** The base id with parameters, or a flat id alone. */
  modelId: string;
  parameters: ReadonlyArray<{ id: string; value: string }>;
  maxMode: boolean;
  /** The model that runs, as an id with its variant suffix (the response's `model`). */
  ranAs: string;
}

/** How the caller consumes one segment of a turn. */
export interface SegmentOptions {
  /**
   * The caller answers its client in one piece after the segment (a non-streaming response), so nothing reaches
   * the client before the segment ends: the turn holds the segment's events back and yields them all at its end.
   * A first segment whose connection drops is then retried even after Cursor's output began (docs/protocol.md §4.2);
   * any other segment fails before its first event, so the caller can still answer with an error status.
   * @default false (events are yielded as they arrive)
   */
  holdEvents?: boolean;
  /**
   * The caller's client takes one tool call per answer (OpenAI `parallel_tool_calls: false`, Anthropic
   * `disable_parallel_tool_use`): the segment ends at its first tool call without waiting for more calls of the
   * step; each further call of the step follows in a segment of its own, once the caller has answered the one before
   * (docs/protocol.md §4.6). @default false (a step's calls come together)
   */
  oneToolCall?: boolean;
  /**
   * The caller's request's input tokens by estimate (engine/input-estimate.ts): what a segment's estimated usage
   * reports as its input when it has no figure of its own (before the turn's first checkpoint), so that the turn
   * tallies what its responses reported (turn-usage.ts). @default none (such a usage keeps its 0)
   */
  inputEstimate?: (() => number) | undefined;
}

/** Lifecycle of one Cursor turn as seen by callers. */
export type AgentTurnStatus = "new" | "streaming" | "parked" | "ended";

/**
 * One user turn on one upstream `Run` stream. It is consumed in segments: `stream()` yields events until a
 * `turn-end`; a segment that ends with reason `tool-calls` leaves the upstream stream open (parked) until
 * `resume()` delivers the results, which yields the next segment on the same stream (no new Run, no replay).
 * Aborting a segment's signal, or breaking out of its iteration, cancels the turn unless it is parked.
 */
export interface AgentTurn {
  readonly conversationId: string;
  /** The id (`x-request-id`) of the turn's current upstream Run; undefined before one is open. */
  readonly runId?: string | undefined;
  readonly status: AgentTurnStatus;
  /** Tool call ids awaiting results while parked; empty otherwise. */
  readonly pendingToolCallIds: readonly string[];
  /**
   * The display name Cursor gave in `routed_model` (the model a router such as `auto` picked,
   * cursor-protocol-addendum-2.md §4); undefined until it arrives (and from servers that never send it).
   */
  readonly routedModel?: string | undefined;
  /**
   * The first segment. Call once. A connection lost before anything reached the caller's client (no event yielded
   * but checkpoints, no exec handed to the caller's executor; with `holdEvents`, anything before the segment's end)
   * is retried once on a connection of the turn's own.
   */
  stream(signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent>;
  /** Delivers results for every pending tool call and yields the next segment. */
  resume(results: ToolResult[], signal?: AbortSignal, options?: SegmentOptions): AsyncIterable<BackendEvent>;
  /** Cancels (if still open) and releases the stream, timers and heartbeats. Idempotent. */
  close(reason?: string): Promise<void>;
  /**
   * Calls `listener` once when the turn ends or expires: closed by anyone, or on its own while parked, when its Run
   * fails or ends or Cursor closes a call the caller holds (the parked-turn registry then lets it go at once).
   * Replaces the listener set before; undefined removes it. Optional: turns that never die while parked need not.
   */
  onEnd?(listener: (() => void) | undefined): void;
}

/** How a model list is asked for. */
export interface ListModelsOptions {
  /**
   * Fetched ahead of any request (serve's fetch at start): a caller that joins this fetch in flight and sees it fail
   * fetches the list again itself, so it gets the errors it would have had without the fetch ahead.
   */
  prefetch?: boolean;
}

/** The agent client façade the rest of the bridge depends on. */
export interface AgentClient {
  startTurn(request: TurnRequest): AgentTurn;
  listModels(signal?: AbortSignal, options?: ListModelsOptions): Promise<ModelInfo[]>;
}

/** Supplies the current Cursor access token; injected into the agent client (backend never imports auth/). */
export type { TokenSource } from "../util/token-source.js";
