/**
 * POST /v1/chat/completions: validate, route to a parked/continued/new Cursor turn, translate the segment, and
 * remember what is needed to resume or continue it (parked turn by tool_call_id, history fingerprint → conversation).
 */
import type { Context } from "hono";
import type { BackendEvent, HistoryMessage, ModelInfo } from "../backend/types.js";
import { type TurnSummary, toChatCompletionChunks } from "../bridge/chunk-stream.js";
import { toChatCompletion } from "../bridge/completion.js";
import { fingerprintMessages } from "../bridge/fingerprint.js";
import { findModel } from "../bridge/model-list.js";
import { toTurnInput } from "../bridge/turn-input.js";
import { headerList } from "../openai/header-list.js";
import { parseChatCompletionRequest } from "../openai/parse-request.js";
import { toSseBody } from "../openai/sse.js";
import { ProxyError } from "../util/errors.js";
import type { RequestLog } from "./access-log.js";
import type { AppDeps } from "./deps.js";
import { primeFirst } from "./first-event.js";
import { type RoutedTurn, routeTurn } from "./turn-routing.js";

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProxyError("invalid_request", "The request body is not valid JSON.", { param: "body" });
  }
}

async function resolveModel(deps: AppDeps, requested: string, signal: AbortSignal): Promise<ModelInfo> {
  const model = findModel(await deps.agentClient.listModels(signal), requested);
  if (!model) {
    throw new ProxyError("not_found", `The model \`${requested}\` does not exist. GET /v1/models lists the models.`, {
      param: "model",
      detail: "model_not_found",
    });
  }
  return model;
}

/**
 * Wraps the segment so the access log learns time-to-first-token and token counts. A plain iterator rather than an
 * async generator: this sits on the per-event hot path, and a generator layer costs several promise hops per event.
 */
function observe(events: AsyncIterable<BackendEvent>, log: RequestLog, now: () => number): AsyncIterable<BackendEvent> {
  const record = (result: IteratorResult<BackendEvent>): IteratorResult<BackendEvent> => {
    if (result.done === true) return result;
    const event = result.value;
    if (log.firstTokenAt === undefined && (event.type === "text-delta" || event.type === "reasoning-delta")) {
      log.firstTokenAt = now();
    }
    if (event.type === "usage") log.tokens = event.usage.totalTokens;
    return result;
  };
  return {
    [Symbol.asyncIterator]: () => {
      const iterator = events[Symbol.asyncIterator]();
      return {
        next: () => iterator.next().then(record),
        return: async (value?: unknown) => (await iterator.return?.(value)) ?? { done: true, value: undefined },
      };
    },
  };
}

/** Handles one chat completion request. */
export async function handleChatCompletions(c: Context, deps: AppDeps, log: RequestLog): Promise<Response> {
  const { request, ignoredParams } = parseChatCompletionRequest(await readJson(c));
  const input = toTurnInput(request);
  log.model = request.model;
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new ProxyError("canceled", "The client disconnected."));
  c.req.raw.signal.addEventListener("abort", onClientGone, { once: true });
  const model = await resolveModel(deps, request.model, abort.signal);
  const messages = input.systemHint
    ? [{ role: "system" as const, content: input.systemHint }, ...input.messages]
    : input.messages;
  const routed = await startSegment(deps, { model: model.id, messages, tools: input.tools }, abort.signal);
  log.route = routed.route;
  const headers: Record<string, string> = {};
  if (ignoredParams.length > 0) headers["x-cursor-bridge-ignored-params"] = headerList(ignoredParams, ",");
  if (input.warnings.length > 0) headers["x-cursor-bridge-warnings"] = headerList(input.warnings, " | ");

  const options = {
    id: `chatcmpl-${deps.newId()}`,
    created: Math.floor(deps.now() / 1000),
    model: request.model,
    reasoning: input.reasoning ? deps.options.reasoningOutput : ("none" as const),
    onFinish: (summary: TurnSummary) => remember(deps, routed, input.messages, summary, model.id, log),
  };
  const events = observe(routed.events, log, deps.now);
  if (!input.stream) {
    const completion = await toChatCompletion(events, options);
    return c.json(completion, 200, headers);
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
  c.header("content-type", "text/event-stream; charset=utf-8");
  c.header("cache-control", "no-cache");
  let finished: () => void = () => {};
  log.streaming = new Promise<void>((resolve) => (finished = resolve));
  const chunks = toChatCompletionChunks(events, { ...options, includeUsage: input.includeUsage });
  const body = toSseBody(chunks, {
    onError: (error) => (log.streamError = error),
    onCancel: onClientGone,
    onEnd: () => {
      c.req.raw.signal.removeEventListener("abort", onClientGone);
      finished();
    },
  });
  return c.body(body);
}

/** Routes the request and waits for the first event so early failures are real HTTP errors. */
async function startSegment(
  deps: AppDeps,
  request: Parameters<typeof routeTurn>[1],
  signal: AbortSignal,
): Promise<RoutedTurn> {
  const routed = routeTurn({ ...deps, newConversationId: deps.newId }, request, signal);
  try {
    return { ...routed, events: await primeFirst(routed.events) };
  } catch (error) {
    // A parked turn whose stream died while waiting: continue from the checkpoint instead (issue 5).
    if (routed.route !== "resumed" || signal.aborted) throw error;
    await routed.turn.close("resume failed");
    deps.logger.warn("parked turn could not be resumed; continuing from the checkpoint", { error });
    const retry = deps.agentClient.startTurn({ ...request, conversationId: routed.conversationId });
    const events = await primeFirst(retry.stream(signal));
    return { route: "continued", turn: retry, conversationId: routed.conversationId, events };
  }
}

function remember(
  deps: AppDeps,
  routed: RoutedTurn,
  history: readonly HistoryMessage[],
  summary: TurnSummary,
  model: string,
  log: RequestLog,
): void {
  const conversationId = summary.conversationId ?? routed.conversationId;
  deps.conversations.remember(fingerprintMessages([...history, summary.message]), conversationId);
  if (summary.finishReason === "tool_calls" && routed.turn.status === "parked") {
    deps.parked.park({ turn: routed.turn, conversationId, model });
    log.parked = true;
  }
}
