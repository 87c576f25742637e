/**
 * POST /v1/messages and /v1/messages/count_tokens: the Anthropic Messages surface. A thin translator over the
 * conversation engine: validate, translate to an EngineRequest, `engine.startTurn`, translate the events back. It
 * does no routing, parking or remembering (the engine does). Errors are Anthropic-shaped.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { Engine } from "../../engine/index.js";
import { ProxyError } from "../../util/errors.js";
import type { RequestLog } from "../kit/access-log.js";
import { headerList } from "../kit/header-list.js";
import { observe, readJson } from "../kit/request-io.js";
import { countInputTokens } from "./count-tokens.js";
import { toAnthropicError } from "./error-body.js";
import { toAnthropicEvents, toAnthropicMessage } from "./events.js";
import { parseFamilyOverrides, resolveAnthropicModel } from "./models.js";
import { parseCountTokensRequest, parseMessagesRequest } from "./parse.js";
import type { CountTokensResponse } from "./response.js";
import { toAnthropicSseBody } from "./sse.js";
import { toEngineRequest } from "./translate.js";

/** Anthropic sends `ping` events every few seconds while the model is silent; so do we. */
export const PING_INTERVAL_MS = 5000;

export interface MessagesHandlerOptions {
  engine: Engine;
  newId: () => string;
  now: () => number;
  /** Silence after which a streaming response gets a `ping` event. */
  pingIntervalMs: number;
  /** Key of the thinking signatures; instances sharing a store derive the same one. @default random per process */
  signingKey?: Buffer | undefined;
  /** `family=id` entries choosing the Cursor model for Claude ids of a family (`--anthropic-models`). */
  anthropicModels?: readonly string[];
}

/** Anthropic-shaped JSON error response for anything thrown. */
export function anthropicErrorResponse(error: unknown, requestId?: string): Response {
  const { status, headers, body } = toAnthropicError(error, { requestId });
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json; charset=utf-8" },
  });
}

/** HMAC signer for thinking blocks: the bridge's own signatures are recognisable, and nothing else is claimed. */
function thinkingSigner(key: Buffer): (text: string) => string {
  return (text) => `cb1.${createHmac("sha256", key).update(text).digest("base64url")}`;
}

function warningHeaders(ignoredParams: string[], warnings: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (ignoredParams.length > 0) headers["x-cursor-bridge-ignored-params"] = headerList(ignoredParams, ",");
  if (warnings.length > 0) headers["x-cursor-bridge-warnings"] = headerList(warnings, " | ");
  return headers;
}

/** Creates the two route handlers. */
export function createMessagesHandlers(options: MessagesHandlerOptions) {
  const sign = thinkingSigner(options.signingKey ?? randomBytes(32));
  const familyOverrides = parseFamilyOverrides(options.anthropicModels ?? []);

  /** Errors thrown here reach the app's onError, which logs internal ones and answers in Anthropic's shape. */
  async function messages(c: Context, log: RequestLog): Promise<Response> {
    const { request: body, ignoredParams } = parseMessagesRequest(await readJson(c));
    const { request: translated, warnings } = toEngineRequest(body);
    const models = await options.engine.listModels(c.req.raw.signal);
    const request = {
      ...translated,
      model: resolveAnthropicModel(body.model, models, translated.options.reasoning, familyOverrides),
    };
    log.model = request.model;
    const abort = new AbortController();
    const onClientGone = () => abort.abort(new ProxyError("canceled", "The client disconnected."));
    c.req.raw.signal.addEventListener("abort", onClientGone, { once: true });
    const release = () => c.req.raw.signal.removeEventListener("abort", onClientGone);
    let turn: Awaited<ReturnType<Engine["startTurn"]>>;
    try {
      turn = await options.engine.startTurn(request, abort.signal);
    } catch (error) {
      release();
      throw error;
    }
    log.route = turn.route;
    const noteParked = () => {
      if (turn.parked === true) log.parked = true;
    };
    const headers = warningHeaders(ignoredParams, warnings);
    const translation = {
      id: `msg_${options.newId()}`,
      model: body.model,
      reasoning: request.options.reasoning,
      sign,
    };
    const events = observe(turn.events, log, options.now);
    if (body.stream !== true) {
      try {
        const message = await toAnthropicMessage(events, translation);
        noteParked();
        return c.json(message, 200, headers);
      } finally {
        release();
      }
    }
    let finished: () => void = () => {};
    log.streaming = new Promise<void>((resolve) => (finished = resolve));
    const stream = toAnthropicSseBody(toAnthropicEvents(events, translation), {
      pingIntervalMs: options.pingIntervalMs,
      onError: (error) => (log.streamError = error),
      onCancel: onClientGone,
      onEnd: () => {
        noteParked();
        release();
        finished();
      },
    });
    return new Response(stream, {
      status: 200,
      headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  }

  async function countTokens(c: Context): Promise<Response> {
    const { request: body } = parseCountTokensRequest(await readJson(c));
    const { request } = toEngineRequest(body);
    const result: CountTokensResponse = { input_tokens: await countInputTokens(request) };
    return c.json(result);
  }

  return { messages, countTokens };
}
