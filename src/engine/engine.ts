/**
 * The conversation engine: for each surface-neutral request it decides how the turn reaches Cursor, starts it,
 * watches its events to remember the reply's history key and to park the turn on tool calls, and expires what it
 * keeps. Routes, in order:
 * 1. replayed:  the trailing tool results answer a turn another request is resuming (or just resumed) with the
 *               identical request → that request's events, no new Run. A different request for it → 409;
 * 2. resumed:   they answer every pending call of a parked turn → resume it on its open Run;
 * 3. continued: the history extends the input of a turn answered before → continue from its checkpoint;
 * 4. new:       a new conversation (the agent client rebuilds state from the history if there is any).
 */
import { randomUUID } from "node:crypto";
import {
  answerEnd,
  answerKey,
  continuationPrefixes,
  EMPTY_HISTORY_KEY,
  echoedAnswer,
  HistoryKeyPrefixes,
} from "../backend/history-fingerprint.js";
import { effortSibling, selectByVariantId, selectModel } from "../backend/model-selection.js";
import { findModel, servedModelId } from "../backend/models.js";
import type {
  AgentClient,
  AgentTurn,
  BackendEvent,
  HistoryMessage,
  ModelChoice,
  ModelInfo,
  ModelSelection,
  SegmentOptions,
  ToolResult,
  TurnRequest,
} from "../backend/types.js";
import { createMemoryConversationIndex } from "../stores/memory/conversation-index.js";
import type { ConversationIndex } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import { type Logger, silentLogger } from "../util/logger.js";
import { primeFirst } from "./first-event.js";
import { type BackendInput, toBackendInput } from "./history.js";
import { requestInputEstimate } from "./input-estimate.js";
import { callsKey, claimedOrigin, originMismatch, toolNamesOf } from "./parked-match.js";
import {
  createParkedTurnRegistry,
  type ParkedEntry,
  type ParkedTurnInfo,
  type ParkedTurnRegistry,
} from "./parked-turns.js";
import { TurnRecording } from "./recording.js";
import type {
  Engine,
  EngineRequest,
  EngineTurn,
  ParkedRelease,
  StartTurnOptions,
  TurnForwarder,
  TurnRoute,
  TurnTrace,
} from "./types.js";

/** Options of {@link createEngine}. */
export interface EngineOptions {
  agentClient: AgentClient;
  /** Where history keys → conversation ids live. @default an in-memory index (lost on restart) */
  index?: ConversationIndex;
  /** @default silentLogger */
  logger?: Logger;
  /** How long a parked turn waits for its tool results. @default 15 minutes */
  parkedTurnTtlMs?: number;
  /** Most turns parked at once; beyond it the oldest is closed (its conversation continues from the checkpoint). */
  maxParkedTurns?: number;
  /** How long an identical retry of a resumed request still gets the recorded answer. @default 10 minutes */
  replayRetentionMs?: number;
  /** Ids of new conversations. @default crypto.randomUUID (hyphenated, as every Cursor client sends) */
  newConversationId?: () => string;
  /**
   * Throws (a 503 naming the store) while a shared store is unreachable, so a turn fails before it starts instead of
   * running without being recorded. @default always ready (the file store)
   */
  storeReady?: () => void;
  /** Forwards tool results for turns parked on another instance (several instances sharing a store). */
  forwarder?: TurnForwarder;
  /**
   * Which tools Cursor's model sees on a turn without an executor (the HTTP doors): `client` sends
   * `x-cursor-agent-allowed-tools` naming only the caller's tools (and web search / fetch when offered), `native`
   * sends no header and leaves Cursor's built-in tools to the native-call redirect. @default "client"
   */
  cursorTools?: "client" | "native";
}

/** What a turn sends besides its messages: the surface's settings, the model selection, the allowed tools. */
interface RunExtras extends Pick<EngineRequest, "executor" | "mode" | "wholeAnswer" | "oneToolCallPerAnswer"> {
  /** The input of a segment's estimated usage ({@link segmentInputEstimate}). */
  inputEstimate?: () => number;
  selection?: ModelSelection;
  allowedTools?: readonly string[];
  /** The index the turn's conversations are found in and recorded to ({@link ownIndex}). */
  index?: ConversationIndex;
}

/**
 * `index` as seen through a key prefix: what a named account's engine (accounts.ts) and one owner's turns use. Closing
 * it does nothing; whoever made `index` closes it.
 */
export function prefixedIndex(index: ConversationIndex, prefix: string): ConversationIndex {
  return {
    remember: (key, conversationId) => index.remember(`${prefix}${key}`, conversationId),
    lookup: (key) => index.lookup(`${prefix}${key}`),
    size: () => index.size(),
    close: async () => {},
  };
}

/** The index as one owner's turns see it (EngineRequest.owner): its keys prefixed `owner:<id>:`; the operator's as is. */
function ownIndex(index: ConversationIndex, owner: string | undefined): ConversationIndex {
  return owner === undefined ? index : prefixedIndex(index, `owner:${owner}:`);
}

/**
 * `x-cursor-agent-allowed-tools` for an HTTP-door turn (docs/protocol.md §2.1): the caller's tools, and Cursor's web
 * search / fetch only when the request offered them. ACP (an executor) runs Cursor's tools itself: no header.
 */
export function allowedToolsFor(request: EngineRequest, cursorTools: "client" | "native"): string[] | undefined {
  if (cursorTools === "native" || request.executor !== undefined) return undefined;
  return [
    "mcp_tool_call",
    ...(request.serverTools?.webSearch === undefined ? [] : ["web_search_tool_call"]),
    ...(request.serverTools?.webFetch === undefined ? [] : ["web_fetch_tool_call"]),
  ];
}

/** The engine plus what the composition root needs. */
export interface BridgeEngine extends Engine {
  /** Turns parked on tool calls right now (/health). */
  parkedCount(): number;
  /** The parked turns, oldest first (the status page). Optional so embedders' engines need not provide it. */
  parkedTurns?(): ParkedTurnInfo[];
  /**
   * Closes the parked turns of `owner` (EngineRequest.owner, opaque here): whoever owns them is gone (a virtual key
   * revoked), so their tool results will never be taken and their open Runs are let go now, not at their TTL.
   * Resolves to how many were parked once they are closed. Optional so embedders' engines need not provide it.
   */
  releaseOwned?(owner: string, reason: string): Promise<number>;
  /**
   * Closes the turns parked on these tool calls (of `release.owner` only): the conversation moved on past them on
   * another instance (TurnForwarder.release). Resolves to how many were closed. Optional as {@link releaseOwned}.
   */
  releaseParked?(release: ParkedRelease): Promise<number>;
  /** Closes parked turns and flushes the index (shutdown). */
  closeAll(): Promise<void>;
}

/** A routed turn before its events are observed. */
interface Routed {
  route: TurnRoute;
  conversationId: string;
  turn: AgentTurn | undefined;
  events: AsyncIterable<BackendEvent>;
}

const MAX_RECORDINGS = 1000;

/** The set of tool call ids a request answers, order-insensitive. */
function claimKeyOf(results: readonly ToolResult[]): string {
  return results
    .map((result) => result.toolCallId)
    .sort()
    .join("\n");
}

/** Creates the engine. */
export function createEngine(options: EngineOptions): BridgeEngine {
  const { agentClient } = options;
  const logger = options.logger ?? silentLogger;
  const index = options.index ?? createMemoryConversationIndex();
  const newConversationId = options.newConversationId ?? randomUUID;
  const retentionMs = options.replayRetentionMs ?? 10 * 60_000;
  const parked: ParkedTurnRegistry = createParkedTurnRegistry({
    ttlMs: options.parkedTurnTtlMs,
    maxEntries: options.maxParkedTurns,
    logger,
  });
  /** The latest model list (resolveModel reads it for every turn); maps `routed_model` names to ids. */
  let catalogue: readonly ModelInfo[] = [];
  /** Resumes in flight or recently finished, by the tool call ids they answered. */
  const recordings = new Map<string, TurnRecording>();

  /** The model and what its turns send; a value the model does not offer is a 400 before any Run. */
  const resolveModel = async (
    requested: string,
    choice: ModelChoice | undefined,
    signal: AbortSignal,
  ): Promise<{ model: ModelInfo; selection: ModelSelection }> => {
    catalogue = await agentClient.listModels(signal);
    const found = findModel(catalogue, requested);
    // A flat id runs the chosen tier through its listed sibling (`gpt-5.3-codex-high`) where Cursor has one.
    const model = found === undefined ? undefined : (effortSibling(catalogue, found, choice) ?? found);
    if (model !== undefined) return { model, selection: selectModel(catalogue, model, choice) };
    const variant = selectByVariantId(catalogue, requested);
    if (variant !== undefined) return variant;
    throw new ProxyError("not_found", `The model \`${requested}\` does not exist. GET /v1/models lists the models.`, {
      param: "model",
      detail: "model_not_found",
    });
  };

  const keep = (claim: string, recording: TurnRecording) => {
    recordings.set(claim, recording);
    while (recordings.size > MAX_RECORDINGS) {
      const oldest = recordings.keys().next().value;
      if (oldest === undefined) break;
      recordings.delete(oldest);
    }
  };
  const release = (claim: string, recording: TurnRecording, error?: unknown) => {
    recording.finish(error);
    // A failed resume is not worth replaying: a retry goes through routing again (and continues from the checkpoint).
    if (error !== undefined) {
      if (recordings.get(claim) === recording) recordings.delete(claim);
      return;
    }
    setTimeout(() => {
      if (recordings.get(claim) === recording) recordings.delete(claim);
    }, retentionMs).unref();
  };

  /** `keys`: the history keys of every prefix of `input.messages`, computed once per request. */
  const startFresh = async (
    input: BackendInput,
    keys: HistoryKeyPrefixes,
    model: string,
    signal: AbortSignal,
    trace: TurnTrace | undefined,
    known?: string,
    surface: RunExtras = {},
  ): Promise<Routed> => {
    let conversationId = known;
    if (conversationId === undefined) {
      // The turn that a cut's prefix was the input of, if the request echoes back the answer it gave.
      const end = answerEnd(input.messages);
      for (const length of continuationPrefixes(input.messages)) {
        const key = keys.at(length - 1);
        if (key === undefined || key === EMPTY_HISTORY_KEY) continue;
        conversationId = await (surface.index ?? index).lookup(
          answerKey(key, echoedAnswer(input.messages, length, end)),
        );
        if (conversationId !== undefined) break;
      }
    }
    const route: TurnRoute = conversationId === undefined ? "new" : "continued";
    conversationId ??= newConversationId();
    const minted = route === "new";
    if (trace !== undefined) trace.conversationId = conversationId;
    // Optional fields assigned, not spread in: a literal with conditional spreads allocated about 0.3 KB more per
    // turn (docs/performance.md, "Where serve's CPU per request goes").
    // The keys as a getter: the turn reads them when it needs them (a new conversation's after its Run's request left).
    const request: TurnRequest = {
      model,
      conversationId,
      messages: input.messages,
      tools: input.tools,
      get historyKeys() {
        return keys.all();
      },
    };
    if (minted) request.newConversation = true;
    if (input.serverTools !== undefined) request.serverTools = input.serverTools;
    if (trace !== undefined) {
      if (trace.requestId !== undefined) request.requestId = trace.requestId;
      request.onRunOpened = (runId: string) => {
        trace.runId = runId;
      };
    }
    if (surface.executor !== undefined) request.executor = surface.executor;
    if (surface.mode !== undefined) request.mode = surface.mode;
    if (surface.selection !== undefined) request.selection = surface.selection;
    if (surface.allowedTools !== undefined) request.allowedTools = surface.allowedTools;
    const turn = agentClient.startTurn(request);
    return { route, conversationId, turn, events: turn.stream(signal, segmentOptions(surface)) };
  };

  /**
   * Resumes a parked turn; if its stream died while parked (or, for a client answered in one piece, at any point
   * before the segment's end), continues from the checkpoint instead.
   */
  const resume = async (
    entry: { turn: AgentTurn; conversationId: string },
    input: BackendInput,
    keys: HistoryKeyPrefixes,
    model: string,
    signal: AbortSignal,
    trace: TurnTrace | undefined,
    surface: RunExtras,
  ): Promise<Routed> => {
    if (trace !== undefined) {
      trace.conversationId = entry.conversationId;
      trace.runId = entry.turn.runId;
    }
    try {
      const events = await primeFirst(entry.turn.resume(input.trailingResults, signal, segmentOptions(surface)));
      return { route: "resumed", conversationId: entry.conversationId, turn: entry.turn, events };
    } catch (error) {
      if (signal.aborted) throw error;
      await entry.turn.close("resume failed");
      logger.warn("parked turn could not be resumed; continuing from the checkpoint", { error });
      const routed = await startFresh(input, keys, model, signal, trace, entry.conversationId, surface);
      return { ...routed, events: await primeFirst(routed.events) };
    }
  };

  /**
   * Closes the turns of `owner` parked on any of `ids`: the conversation moved past them without their results (the
   * user interrupted the tools, or answered them before a new message), so their Runs wait for results that will
   * never come. Takes the owner, not the request (a captured request would live as long as the turn's other closures,
   * parked ones included).
   */
  const releaseMovedOn = (ids: readonly string[], owner: string | undefined): number => {
    const mine = (entry: ParkedEntry) => entry.origin.owner === owner;
    let closed = 0;
    for (let moved = parked.release(ids, mine); moved !== undefined; moved = parked.release(ids, mine)) {
      logger.info("closing a parked turn: the conversation moved on without its results");
      closeSuperseded(moved.turn, logger);
      closed++;
    }
    return closed;
  };

  return {
    async startTurn(request: EngineRequest, signal: AbortSignal, how: StartTurnOptions = {}): Promise<EngineTurn> {
      options.storeReady?.();
      const input = toBackendInput(request);
      const forwarder = options.forwarder;
      if (forwarder !== undefined && how.forwarded !== true && input.trailingResults.length > 0) {
        const owner = forwarder.ownerOf(input.trailingResults.map((result) => result.toolCallId));
        if (owner !== undefined) {
          const forwarded = await forwarder.forward(owner, request, signal);
          if (forwarded !== undefined) return forwarded;
          // One extra Run: the open Cursor turn died with its instance; the stored state continues it here.
          logger.warn("the instance holding this parked turn is gone; continuing the conversation here", { owner });
        }
      }
      const { model, selection } = await resolveModel(request.model, request.options.choice, signal);
      const allowedTools = allowedToolsFor(request, options.cursorTools ?? "client");
      const extras: RunExtras = {};
      if (request.executor !== undefined) extras.executor = request.executor;
      if (request.mode !== undefined) extras.mode = request.mode;
      if (request.wholeAnswer !== undefined) extras.wholeAnswer = request.wholeAnswer;
      if (request.oneToolCallPerAnswer === true) extras.oneToolCallPerAnswer = true;
      const estimate = segmentInputEstimate(request, how.inputEstimate);
      if (estimate !== undefined) extras.inputEstimate = estimate;
      extras.selection = selection;
      if (allowedTools !== undefined) extras.allowedTools = allowedTools;
      const turnIndex = ownIndex(index, request.owner);
      extras.index = turnIndex;
      if (!model.vision && request.messages.some((m) => m.role === "user" && m.parts.some((p) => p.type === "image"))) {
        throw new ProxyError("invalid_request", `The model \`${model.id}\` does not accept image input.`, {
          param: "model",
        });
      }
      // Every prefix's key, computed once: routing, the replay claim and the index all use them. Each is hashed when
      // first needed; what a new conversation's Run does not need is hashed once its request has left (node's HTTP/2
      // sends it from a native immediate, which runs before this one), in the wait for Cursor's answer.
      const keys = new HistoryKeyPrefixes(input.messages);
      setImmediate(hashAll, keys);
      let routed: Routed;
      let recording: TurnRecording | undefined;
      let claim = "";
      let resumedFrom: ParkedEntry | undefined;
      if (input.trailingResults.length > 0) {
        const requestKey = keys.last();
        // Per owner: another virtual key's identical request is neither replayed this answer nor told (409) of it.
        claim =
          request.owner === undefined
            ? claimKeyOf(input.trailingResults)
            : `${request.owner}\n${claimKeyOf(input.trailingResults)}`;
        const existing = recordings.get(claim);
        if (existing !== undefined && (!existing.done || existing.requestKey === requestKey)) {
          if (existing.requestKey !== requestKey) {
            throw new ProxyError(
              "invalid_request",
              "Another request with different content is already answering these tool calls.",
              { status: 409, detail: "turn_in_progress", param: "messages" },
            );
          }
          logger.debug("replaying the answer of an identical request", { claim });
          return new ReplayedTurn(model, await primeFirst(existing.read(signal)), existing);
        }
        const ids = input.trailingResults.map((result) => result.toolCallId);
        // Another owner's parked turn is neither resumed nor closed by this request. (The closure captures the owner,
        // not the request: a captured request would live as long as the turn's other closures, parked ones included.)
        const owner = request.owner;
        const mayTake = (parkedEntry: ParkedEntry) => parkedEntry.origin.owner === owner;
        let entry = parked.take(ids, mayTake);
        // A parked turn this request answers only in part: the conversation has moved past it.
        let stale = entry === undefined ? parked.release(ids, mayTake) : undefined;
        let why = stale && "the request answers only some of its calls";
        const mismatch =
          entry &&
          originMismatch(entry.origin, claimedOrigin(input.messages, keys.all(), selection.ranAs, input.tools));
        if (mismatch !== undefined) [stale, why, entry] = [entry, mismatch, undefined];
        if (stale !== undefined) {
          // The open Run only knows the history it parked with: close it (its state stays in the checkpoint) and
          // route the request as any other, without waiting for Cursor to end it (see closeSuperseded).
          logger.info("not resuming a parked turn: the request does not continue it", { reason: why });
          closeSuperseded(stale.turn, logger);
        }
        if (entry !== undefined) {
          resumedFrom = entry;
          // The turn runs while anyone reads it (recording.ts): the retry of a client that went away included.
          recording = new TurnRecording(requestKey, signal);
          keep(claim, recording);
          try {
            routed = await resume(entry, input, keys, model.id, recording.runSignal, how.trace, extras);
          } catch (error) {
            release(claim, recording, error);
            throw error;
          }
        }
      }
      // No results at the end, yet the history holds calls a turn is parked on: the conversation moved past them
      // (the user interrupted the tools, or answered them before a new message). That Run waits for results that will
      // never come: closed now, not at its TTL (its checkpoint continues the conversation below).
      if (input.trailingResults.length === 0 && parked.size() > 0) {
        releaseMovedOn(historyCallIds(input.messages), request.owner);
      }
      // The same for a turn another instance holds (its calls carry that instance's tag): that instance is told to
      // close it, by the same rule (any call of the history, not only the latest step's: a turn parked on an earlier
      // step is left there when an earlier release did not get through), and neither is waited for (see
      // closeSuperseded; the release never fails the request).
      if (input.trailingResults.length === 0 && forwarder?.release !== undefined && how.forwarded !== true) {
        void releaseElsewhere(forwarder, historyCallIds(input.messages).slice(0, RELEASED_ELSEWHERE_MAX), request);
      }
      routed ??= await startFresh(input, keys, model.id, signal, how.trace, undefined, extras);
      if (recording === undefined) routed = { ...routed, events: await primeFirst(routed.events) };
      const watched = watch(routed, keys.last(), model.id, {
        ranAs: selection.ranAs,
        // A resumed turn's Run still offers the tools it was opened with, whatever this request declares.
        runTools: resumedFrom?.origin.toolNames ?? input.tools,
        owner: request.owner,
        index: turnIndex,
        parked,
        logger,
        recording,
        onEnd: (error) => recording && release(claim, recording, error),
      });
      const started = new StartedTurn(routed.route, model, selection, watched, routed.turn, catalogue);
      if (recording !== undefined) recording.servedBy = started;
      return started;
    },
    // One engine serves one account: the router chose it by the account.
    listModels: (signal, _account, options) => agentClient.listModels(signal, options),
    parkedCount: () => parked.size(),
    parkedTurns: () => parked.list(),
    releaseParked: async (release) => releaseMovedOn(release.toolCallIds, release.owner),
    async releaseOwned(owner, reason) {
      const owned = parked.releaseOwned(owner);
      if (owned.length > 0)
        logger.info("closing the parked turns of an owner that is gone", { turns: owned.length, reason });
      await Promise.allSettled(owned.map((entry) => entry.turn.close(reason)));
      return owned.length;
    },
    async closeAll() {
      await parked.closeAll();
      await index.close();
    },
  };
}

/** Hashes every prefix's key (a function, not a closure per request). */
function hashAll(keys: HistoryKeyPrefixes): void {
  keys.last();
}

/**
 * Closes a parked turn the conversation moved past, without waiting for Cursor to end its Run (up to the cancel
 * grace): the next Run does not depend on that. It continues from the checkpoint saved before the parked turn's
 * answer ended (the turn waits for that save before its turn-end), the old turn stops saving anything as soon as its
 * close begins (synchronously: what Cursor sends after a parked turn is closed is never saved, docs/protocol.md
 * §4.6), and the wire reference has the next message sent as a new Run with the last checkpoint as its state (§4.7),
 * with no rule that an earlier Run of the conversation must have ended first (cursor-protocol.md §4.5 records the IDE's
 * cancel reason `new_message_submitted`: it cancels a turn because a new message goes out).
 */
function closeSuperseded(turn: AgentTurn, logger: Logger): void {
  turn
    .close("superseded")
    .catch((error: unknown) => logger.debug("closing a superseded parked turn failed", { error }));
}

/**
 * The most tool-call ids of one history (the latest) a move-on sends to the other instances
 * ({@link TurnForwarder.release}): a parked turn waits for its results at most the parked-turn TTL (15 minutes by
 * default), so one parked on a call further back in a long agent session than this is left to its TTL. It bounds the
 * release's body (the receiving end refuses more than 1,000 ids, cluster/wire.ts) and the work of each new message.
 */
const RELEASED_ELSEWHERE_MAX = 256;

/**
 * Tells each other instance that handed out some of `ids` to close the turn it holds parked on them (best effort:
 * one that cannot be told lets it wait for its TTL, as before). Not tied to the request: a client that goes away
 * meanwhile still moved on.
 */
async function releaseElsewhere(
  forwarder: TurnForwarder,
  ids: readonly string[],
  request: EngineRequest,
): Promise<void> {
  const signal = new AbortController().signal;
  const byOwner = new Map<string, string[]>();
  for (const id of ids) {
    const owner = forwarder.ownerOf([id]);
    if (owner !== undefined) byOwner.set(owner, [...(byOwner.get(owner) ?? []), id]);
  }
  await Promise.all(
    [...byOwner].map(([owner, toolCallIds]) =>
      forwarder.release?.(owner, { toolCallIds, owner: request.owner, account: request.account }, signal),
    ),
  );
}

/** The ids of every tool call the history's assistant messages made, latest first. */
function historyCallIds(messages: readonly HistoryMessage[]): string[] {
  const ids: string[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as HistoryMessage;
    if (message.role === "assistant") for (const call of message.toolCalls) ids.push(call.id);
  }
  return ids;
}

/**
 * A started turn as the surface sees it. A class, not an object literal with getters: such a literal is built in
 * dictionary mode with its own accessor pairs, about 0.4 KB per getter, and this runs once per request.
 */
class StartedTurn implements EngineTurn {
  readonly events: AsyncIterable<BackendEvent>;

  constructor(
    readonly route: TurnRoute,
    readonly model: ModelInfo,
    readonly selection: ModelSelection,
    private readonly watched: WatchedTurn,
    private readonly turn: AgentTurn | undefined,
    /** The model list when the turn started: maps the turn's `routed_model` name to an id. */
    private readonly models: readonly ModelInfo[],
  ) {
    this.events = watched.events;
  }

  get parked(): boolean {
    return this.watched.state.parked;
  }

  get servedModel(): string | undefined {
    const name = this.turn?.routedModel;
    return name === undefined ? this.selection.ranAs : servedModelId(this.models, name);
  }
}

/**
 * An identical request's answer replayed from the recording of the turn that answered it first: no Run of its own,
 * and the model it names is the one that turn's answer names (what the client was told the first time).
 */
class ReplayedTurn implements EngineTurn {
  readonly route = "replayed" as const;
  readonly parked = false;

  constructor(
    readonly model: ModelInfo,
    readonly events: AsyncIterable<BackendEvent>,
    private readonly recording: TurnRecording,
  ) {}

  get servedModel(): string | undefined {
    return this.recording.servedModel;
  }
}

/**
 * The input of a segment's estimated usage when Cursor has not counted it (backend/turn-usage.ts): the request's
 * estimate (input-estimate.ts), the caller's when it made one, so the kit, the gateway and the engine count the request
 * once. Only a request with tools needs it: its segments can end on tool calls before Cursor counts anything, and the
 * turn tallies what they reported. Counted at once, so that a parked turn holds a number, not the request (nor the
 * caller's estimate, which holds it); the request stays plain data (it crosses between instances as JSON).
 */
function segmentInputEstimate(
  request: Pick<EngineRequest, "instructions" | "messages" | "tools">,
  given: (() => number) | undefined,
): (() => number) | undefined {
  if (request.tools.length === 0) return undefined;
  const tokens = (given ?? requestInputEstimate(request))();
  return () => tokens;
}

/** How the backend should hand out a segment's events for this request. */
function segmentOptions(
  surface: Pick<RunExtras, "wholeAnswer" | "oneToolCallPerAnswer" | "inputEstimate">,
): SegmentOptions {
  const options: SegmentOptions = {};
  if (surface.wholeAnswer === true) options.holdEvents = true;
  if (surface.oneToolCallPerAnswer === true) options.oneToolCall = true;
  if (surface.inputEstimate !== undefined) options.inputEstimate = surface.inputEstimate;
  return options;
}

/** A turn's events as {@link watch} hands them on; `state.parked` is true once it parked the turn. */
interface WatchedTurn {
  events: AsyncIterable<BackendEvent>;
  readonly state: { readonly parked: boolean };
}

interface WatchDeps {
  /** The request's model as it runs (ModelSelection.ranAs), for ParkedOrigin. */
  ranAs: string;
  /** The tools the turn's Run offers: the request's, or a resumed turn's names (ParkedOrigin.toolNames). */
  runTools: string | readonly { name: string }[];
  /** EngineRequest.owner, for ParkedOrigin. */
  owner: string | undefined;
  index: ConversationIndex;
  parked: ParkedTurnRegistry;
  logger: Logger;
  recording: TurnRecording | undefined;
  onEnd: (error?: unknown) => void;
}

/**
 * Observes a turn's events on their way to the surface: before `turn-end` is handed on, makes the key of the turn's
 * input and the answer it handed out → conversation durable (history-fingerprint.ts, answerKey; the input's key is
 * the one its checkpoint record stores) and parks the turn if it waits for tool results. A plain iterator rather
 * than an async generator: this sits on the per-event hot path.
 */
function watch(routed: Routed, requestKey: string, model: string, deps: WatchDeps): WatchedTurn {
  let conversationId = routed.conversationId;
  let ended = false;
  const state = { parked: false };
  /** The calls this segment handed out (what the request that resumes a parked turn must send back). */
  let calls: { id: string; name: string; arguments: string }[] | undefined;
  const end = (error?: unknown) => {
    if (ended) return;
    ended = true;
    deps.onEnd(error);
  };
  // What the client is handed of this segment's answer, for the index key (history-fingerprint.ts, answerKey).
  let text = "";
  const atTurnEnd = async (reason: string) => {
    try {
      await deps.index.remember(answerKey(requestKey, { text, toolCalls: calls ?? [] }), conversationId);
    } catch (error) {
      deps.logger.warn("could not record the conversation; its next turn will rebuild it", { error });
    }
    const turn = routed.turn;
    if (reason === "tool-calls" && turn?.status === "parked") {
      const toolNames = typeof deps.runTools === "string" ? deps.runTools : toolNamesOf(deps.runTools);
      const origin = { requestKey, callsKey: callsKey(calls ?? []), ranAs: deps.ranAs, toolNames, owner: deps.owner };
      deps.parked.park({ turn, conversationId, model, origin });
      state.parked = true;
    }
  };
  const turnEnded = async (result: IteratorYieldResult<BackendEvent>, reason: string) => {
    await atTurnEnd(reason);
    deps.recording?.push(result.value);
    end();
    return result;
  };
  // Synchronous for every event but `turn-end`: a promise returned from a `then` callback costs the reader two more
  // microtask hops per event.
  const observe = (
    result: IteratorResult<BackendEvent>,
  ): IteratorResult<BackendEvent> | Promise<IteratorResult<BackendEvent>> => {
    if (result.done === true) {
      end();
      return result;
    }
    const event = result.value;
    if (event.type === "text-delta") text += event.text;
    else if (event.type === "tool-call") {
      calls ??= [];
      calls.push({ id: event.toolCallId, name: event.toolName, arguments: event.arguments });
    } else if (event.type === "turn-end") return turnEnded(result, event.reason);
    else if (event.type === "checkpoint") conversationId = event.conversationId;
    deps.recording?.push(event);
    return result;
  };
  /** Reads the rest of the turn for the recording alone (its first reader went away). */
  const drain = (iterator: AsyncIterator<BackendEvent>) => {
    void (async () => {
      try {
        for (;;) {
          const result = await observe(await iterator.next());
          if (result.done === true || ended) return;
        }
      } catch (error) {
        end(error);
      }
    })();
  };
  const events: AsyncIterable<BackendEvent> = {
    [Symbol.asyncIterator]: () => {
      const iterator = routed.events[Symbol.asyncIterator]();
      return {
        next: () =>
          iterator.next().then(observe, (error: unknown) => {
            end(error);
            throw error;
          }),
        return: async (value?: unknown) => {
          // An identical request replaying this answer still reads it: run the turn to its end for it.
          if (!ended && deps.recording?.ownerLeft() === true) {
            drain(iterator);
            return { done: true, value: undefined };
          }
          end(ended ? undefined : new ProxyError("canceled", "The request that resumed the turn went away."));
          return (await iterator.return?.(value)) ?? { done: true, value: undefined };
        },
      };
    },
  };
  return { events, state };
}
