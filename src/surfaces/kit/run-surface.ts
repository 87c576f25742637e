/**
 * The one way a surface runs a turn, whatever its wire format: resolve the model name (aliases, Anthropic families),
 * start the turn on the engine with an abort that follows the client (the listener is removed on every path: turn
 * failed to start, JSON answered or failed, stream ended, failed or canceled), fill the request log (resolved model,
 * route, conversation, Run, parked, first token, tokens), set the ignored-params / warnings headers, and answer as
 * JSON or as a stream. A surface supplies only its translation and its two renderers.
 */
import type { Context } from "hono";
import type { ModelInfo } from "../../backend/types.js";
import {
  type Engine,
  type EngineRequest,
  type EngineTurn,
  requestInputEstimate,
  type TurnRoute,
  type TurnTrace,
} from "../../engine/index.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage, redactText } from "../../util/logger.js";
import { type PendingStreamedResponse, pendingStreamedResponse } from "../../util/pull-body.js";
import type { ShutdownNotice } from "../../util/shutdown-notice.js";
import { type AppEnv, madeWithRequestId, requestIdHeaders } from "./access-log.js";
import { headerList } from "./header-list.js";
import type { ModelNames } from "./model-names.js";
import { watchClientGone, watchTurn } from "./request-io.js";
import { cutAnswer } from "./stop-sequences.js";
import { foldTurn, type StreamWire, type Translation, turnSource } from "./translate.js";

/** A translated request, ready to run. */
export interface SurfaceRequest {
  /** The engine request, `model` as the client sent it (the kit resolves aliases). */
  request: EngineRequest;
  /** Top-level keys accepted without effect (`x-cursor-bridge-ignored-params`). */
  ignoredParams: readonly string[];
  /** What could only be approximated (`x-cursor-bridge-warnings`). */
  warnings: readonly string[];
  /** Answer as a stream (else one JSON body). */
  stream: boolean;
  /**
   * The client's output cap (`max_tokens`, `max_output_tokens`), when it sent one: the kit cuts the answer there by
   * estimate (stop-sequences.ts, `capOutput`), and the gateway reserves the turn's budget by it.
   */
  maxOutputTokens?: number | undefined;
  /**
   * Whether the client asked for reasoning (chat `reasoning_effort`, Responses `reasoning`, Messages `thinking`) or
   * reads it inside its text (`<think>` tags): only then does reasoning count toward the output cap
   * (stop-sequences.ts, `capOutput`). @default false
   */
  reasoningRequested?: boolean | undefined;
  /**
   * Stop sequences (chat `stop`, Messages `stop_sequences`): the kit cuts the answer at the first (stop-sequences.ts).
   */
  stopSequences?: readonly string[] | undefined;
}

/** What a renderer knows about the running turn. */
export interface ServedTurn {
  /** The Cursor model that serves the turn: what the response's `model` field names. */
  model: string;
  route: TurnRoute;
  /** True once the turn ended parked on tool calls (read it after the events are consumed). */
  readonly parked: boolean;
  /** The stop sequence that ended the answer, once one did (read it when the turn ends). */
  readonly stopSequence: string | undefined;
  /**
   * The request's input tokens by estimate (the engine's `requestInputEstimate`, the one figure of the request): what
   * an estimated usage without an input figure reports, on every door; a door that reports usage before Cursor counts
   * it (Messages' `message_start`) reports this.
   */
  inputTokens(): number;
}

/**
 * The {@link ServedTurn} of a started turn. A class, not an object literal with a getter (built in dictionary mode
 * with its own accessor pair, about 0.4 KB; this runs once per request).
 */
class StartedServedTurn implements ServedTurn {
  readonly model: string;
  readonly route: TurnRoute;
  stopSequence: string | undefined = undefined;

  constructor(
    private readonly started: EngineTurn,
    readonly inputTokens: () => number,
  ) {
    this.model = started.servedModel ?? started.model.id;
    this.route = started.route;
  }

  get parked(): boolean {
    return this.started.parked === true;
  }
}

/** How a surface writes a turn out: its translation (kit/translate.ts) and how its frames are encoded. */
export interface SurfaceRenderer<F = unknown, R = unknown> {
  /** A fresh translation of this turn; its `result()` is the JSON body of a non-streaming answer. */
  translation(turn: ServedTurn): Translation<F, R> & { result(): R };
  wire: StreamWire<F>;
}

/** What the kit needs from the app. */
export interface SurfaceKit {
  engine: Engine;
  models: ModelNames;
  now: () => number;
  /**
   * Given when a stopping server's drain time is up: the turn is aborted with its error, which the door renders as
   * its final error frame (or error response). @default none (turns end only with their client or their upstream)
   */
  shutdown?: ShutdownNotice | undefined;
}

/** What logs, metrics and the status page show for a model the catalogue does not list. */
export const UNKNOWN_MODEL = "unknown";

/** The catalogue's id for `model` (an id or alias it lists, `auto` included), else {@link UNKNOWN_MODEL}. */
async function knownModel(model: string, listModels: () => Promise<ModelInfo[]>): Promise<string> {
  const wanted = model.trim().toLowerCase();
  if (wanted === "auto") return "auto";
  let models: ModelInfo[];
  try {
    models = await listModels();
  } catch {
    return UNKNOWN_MODEL;
  }
  const found =
    models.find((entry) => entry.id.toLowerCase() === wanted) ??
    models.find((entry) => entry.aliases.some((alias) => alias.toLowerCase() === wanted));
  return found?.id ?? UNKNOWN_MODEL;
}

/** Content type of every streamed answer (SSE). */
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

function noteHeaders(input: SurfaceRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  if (input.ignoredParams.length > 0) headers["x-cursor-bridge-ignored-params"] = headerList(input.ignoredParams, ",");
  if (input.warnings.length > 0) headers["x-cursor-bridge-warnings"] = headerList(input.warnings, " | ");
  return headers;
}

/** Runs one turn for a surface and answers it. Errors before the answer reach the surface's error handler. */
export async function runSurface<F, R>(
  c: Context<AppEnv>,
  kit: SurfaceKit,
  input: SurfaceRequest,
  renderer: SurfaceRenderer<F, R>,
): Promise<Response> {
  const log = c.get("log");
  const principal = c.get("principal");
  // The request's signal is read only when the models are listed (watchClientGone, request-io.ts).
  const listModels = () => kit.engine.listModels(c.req.raw.signal, principal?.account);
  // Until the model is known, logs, metrics and the status page say `unknown`: the raw field may hold anything,
  // even a key a client sent as its model.
  log.model = UNKNOWN_MODEL;
  log.askedModel = redactText(clampForMessage(input.request.model, 80));
  const model = await kit.models.resolve(input.request.model, input.request.options.reasoning, listModels);
  log.model = await knownModel(model, listModels);
  principal?.checkModel(input.request.model, model);
  // The request's one input estimate, counted when first asked: the gateway's worst case and bill, the engine (the
  // input of a segment's estimated usage), the door's usage and the cut answer's all read it.
  const inputTokens = requestInputEstimate(input.request);
  await c.get("admitTurn")?.({ model, request: input.request, maxOutputTokens: input.maxOutputTokens, inputTokens });
  const trace: TurnTrace = { requestId: log.requestId };
  log.trace = trace;

  const abort = new AbortController();
  const onClientGone = () => abort.abort(new ProxyError("canceled", "The client disconnected."));
  const stopWatching = watchClientGone(c, onClientGone);
  const stopWatchingShutdown = kit.shutdown?.watch((reason) => abort.abort(reason));
  // A key revoked, rotated or expired while its request runs ends the request (gateway/keys/key-index.ts).
  const stopWatchingKey = principal?.watchKey?.((reason) => abort.abort(reason));
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    stopWatching();
    stopWatchingShutdown?.();
    stopWatchingKey?.();
  };

  // A stream's response (its web stream, body state, Response and headers) does not depend on the turn: it is made in
  // the check phase after this event-loop turn, when the Run's request has left and the first event is still awaited,
  // instead of after that event (docs/performance.md, "Where one stream's time to first token goes").
  let served: ServedTurn | undefined;
  let finished: () => void = () => {};
  const noteParked = () => {
    if (served !== undefined) log.parked = served.parked;
  };
  const prepare = () => {
    const pending = pendingStreamedResponse(
      { status: 200, headers: Object.assign(noteHeaders(input), SSE_HEADERS, requestIdHeaders(c, log.requestId)) },
      {
        onError: (error) => (log.streamError = error),
        onCancel: onClientGone,
        onEnd: () => {
          noteParked();
          release();
          finished();
        },
      },
    );
    // The access log would set the same headers on the way back to the first event's frames (access-log.ts).
    madeWithRequestId(pending.response);
    return pending;
  };
  let prepared: PendingStreamedResponse | undefined;
  const early = input.stream
    ? setImmediate(() => {
        // Outside the request's promise chain: a failure here would end the process, so it is left to the same
        // call after the turn started, where it fails the request as before.
        try {
          prepared = prepare();
        } catch {}
      })
    : undefined;

  let started: Awaited<ReturnType<Engine["startTurn"]>>;
  try {
    // One copy, its other fields assigned: spreading in a conditional `{}` costs an object per request.
    const request: EngineRequest = { ...input.request, model };
    if (principal !== undefined) {
      if (principal.account !== undefined) request.account = principal.account;
      request.owner = principal.keyId;
    }
    // A JSON answer reaches the client only once the turn ends: the engine may hold the events back and retry a
    // dropped connection meanwhile.
    if (!input.stream) request.wholeAnswer = true;
    started = await kit.engine.startTurn(request, abort.signal, { trace, inputEstimate: inputTokens });
  } catch (error) {
    clearImmediate(early);
    release();
    throw error;
  }
  clearImmediate(early);
  const turn = new StartedServedTurn(started, inputTokens);
  served = turn;
  log.model = served.model;
  log.route = served.route;
  const params = started.selection?.parameters ?? [];
  if (params.length > 0) {
    log.params = [...params]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(({ id, value }) => `${id}=${value}`)
      .join(",");
  }
  const watch = watchTurn(log, kit.now);
  const events = cutAnswer(
    started.events,
    {
      stopSequences: input.stopSequences,
      maxOutputTokens: input.maxOutputTokens,
      reasoningRequested: input.reasoningRequested,
      inputTokens,
    },
    {
      onStop: (sequence) => {
        turn.stopSequence = sequence;
      },
      onLength: () => {},
    },
  );

  if (!input.stream) {
    try {
      const body = await foldTurn(events, renderer.translation(turn), { watch, inputTokens });
      noteParked();
      return c.json(body, 200, noteHeaders(input));
    } finally {
      release();
    }
  }
  log.streaming = new Promise<void>((resolve) => (finished = resolve));
  const answer = prepared ?? prepare();
  try {
    answer.attach(
      turnSource(events, renderer.translation(turn), renderer.wire, {
        watch,
        inputTokens,
        errorContext: { requestId: log.requestId },
      }),
    );
  } catch (error) {
    release();
    finished();
    throw error;
  }
  return answer.response;
}
