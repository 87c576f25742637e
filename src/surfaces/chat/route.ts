/**
 * POST /v1/chat/completions: parse → translate to an engine request → engine → translate the events back → write.
 * How the turn reaches Cursor (resumed / continued / new / replayed), parking and remembering are the engine's.
 */
import type { Context } from "hono";
import { ProxyError } from "../../util/errors.js";
import type { RequestLog } from "../kit/access-log.js";
import type { AppDeps } from "../kit/deps.js";
import { headerList } from "../kit/header-list.js";
import { observe, readJson } from "../kit/request-io.js";
import { toSseBody } from "../kit/sse.js";
import { toChatCompletionChunks } from "./chunk-stream.js";
import { toChatCompletion } from "./completion.js";
import { parseChatCompletionRequest } from "./parse.js";
import { toTurnInput } from "./translate.js";

/** Handles one chat completion request. */
export async function handleChatCompletions(c: Context, deps: AppDeps, log: RequestLog): Promise<Response> {
  const { request, ignoredParams } = parseChatCompletionRequest(await readJson(c));
  const input = toTurnInput(request, { maxImageBytes: deps.options.maxImageBytes });
  log.model = request.model;
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new ProxyError("canceled", "The client disconnected."));
  c.req.raw.signal.addEventListener("abort", onClientGone, { once: true });
  const turn = await deps.engine.startTurn(input.request, abort.signal);
  log.route = turn.route;
  // The model that served the turn when Cursor named it (`auto` → its pick), else the requested one.
  const model = turn.servedModel ?? request.model;
  log.model = model;
  const headers: Record<string, string> = {};
  if (ignoredParams.length > 0) headers["x-cursor-bridge-ignored-params"] = headerList(ignoredParams, ",");
  if (input.warnings.length > 0) headers["x-cursor-bridge-warnings"] = headerList(input.warnings, " | ");

  const options = {
    id: `chatcmpl-${deps.newId()}`,
    created: Math.floor(deps.now() / 1000),
    model,
    reasoning: input.request.options.reasoning ? deps.options.reasoningOutput : ("none" as const),
    onFinish: () => {
      log.parked = turn.parked === true;
    },
  };
  const events = observe(turn.events, log, deps.now);
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
