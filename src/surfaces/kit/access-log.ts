/**
 * One log line that explains a request: method, path, status, the request id, the resolved Cursor model (`model`),
 * the conversation (`conv`) and upstream Run (`run`) where there was one, the error code on failures (`code`), time to
 * first byte, time to first token, total time, tokens, and how the Cursor turn was reached (new / continued /
 * resumed / replayed) and whether it was left parked. JSON logs carry the same keys.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { BackendEvent } from "../../backend/types.js";
import type { TurnTrace } from "../../engine/index.js";
import { clampForMessage, type Logger, redactText } from "../../util/logger.js";
import { decideError, type ErrorDecision } from "./error-policy.js";
import type { Principal } from "./principal.js";
import { clientOf, type RequestRecord, surfaceOf } from "./recent-requests.js";
import type { AdmitTurn } from "./turn-admission.js";

/** Longest client-supplied value (path, model) written to the access log. */
const MAX_LOGGED_VALUE = 200;

/**
 * A client's `x-request-id` is kept when it is 1–255 word characters, `-` or `=` (the rule of hono's request-id
 * middleware); anything else (spaces, newlines, quotes, a megabyte) is replaced by a fresh id.
 */
export function acceptedRequestId(header: string | undefined): string | undefined {
  return header !== undefined && header.length <= 255 && /^[\w\-=]+$/.test(header) ? header : undefined;
}

/** Facts gathered while a request is handled. */
export interface RequestLog {
  requestId: string;
  startedAt: number;
  /**
   * The model as logs, metrics and the status page show it: a model id the catalogue lists (the one that served,
   * once known), or `unknown`; never the client's raw field, which may hold anything (even a key sent as a model).
   */
  model?: string;
  /** The client's model field, redacted and cut, kept for the log line only (`asked=`) when `model` is `unknown`. */
  askedModel?: string;
  /** The parameters the turn sent with its model, `id=value` sorted by id and joined by `,` (`params=`). */
  params?: string;
  /** Conversation and Run, filled in by the engine (`conv=`, `run=`). */
  trace?: TurnTrace;
  route?: "new" | "continued" | "resumed" | "replayed";
  parked?: boolean;
  firstTokenAt?: number;
  tokens?: number;
  /** The turn's token usage (the last `usage` event): what budgets, spend and metrics count. */
  usage?: Extract<BackendEvent, { type: "usage" }>["usage"];
  /**
   * Characters of text, reasoning and tool arguments the turn handed out: what a turn cut before its usage arrived
   * (the client went away, the upstream dropped) is billed by (gateway/limits).
   */
  outputChars?: number;
  /** Web searches / fetches Cursor ran for this request (issue #27). */
  webSearches?: number;
  webFetches?: number;
  /** Web searches / fetches Cursor asked for that the request offered no tool for (refused; the client saw none). */
  webRefused?: number;
  streamError?: unknown;
  /** Set by streaming handlers: settles when the body has been fully written or abandoned. */
  streaming?: Promise<void>;
}

/** A finished request, as the access log hands it to its `onRequestDone` listeners (metrics, spend, limits). */
export interface RequestDone {
  method: string;
  path: string;
  /** The API surface (`chat`, `messages`, `responses`, `models`, `count_tokens`, `other`; recent-requests.ts). */
  surface: string;
  /** Whether the path is under `/v1/` (an API request). */
  api: boolean;
  status: number;
  log: RequestLog;
  principal: Principal | undefined;
  /** The failure the client saw (a handler's error, else one after the headers), decided as the surfaces do. */
  failure: ErrorDecision | undefined;
  /** True when `failure` happened after the status was sent (a streamed body that broke). */
  streamFailed: boolean;
  /** When the body was done (epoch ms, the access log's clock). */
  endedAt: number;
}

/** Called once per request when its body is done; must not throw (a throw is caught and logged). */
export type RequestDoneListener = (done: RequestDone) => void;

const redactOptional = (text: string | undefined) => (text === undefined ? undefined : redactText(text));

/** Hono variables set by the app's middleware. */
export type AppEnv = {
  Variables: {
    log: RequestLog;
    /** Set by the team gateway's auth middleware when virtual keys are in use (principal.ts). */
    principal?: Principal | undefined;
    /** Set by the team gateway's limits for a virtual key: run by the kit right before the turn (turn-admission.ts). */
    admitTurn?: AdmitTurn | undefined;
  };
};

/**
 * Sets a header on the finished response in place. `c.header()` after the handler copies the Response instead; on
 * @hono/node-server that turns the adapter's lightweight response into a full web Response, which the adapter then
 * writes on its slow path (a streamed body's headers wait for a timer tick). Headers of a Response built here are
 * mutable; only a fetched Response's are not, and those still go through `c.header()`.
 */
function setResponseHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/**
 * The id headers the access log gives a request's response: `x-request-id`, and Anthropic's `request-id` on
 * Anthropic-shaped ones (its SDK's `_request_id` and `APIError.requestID` read that header).
 */
export function requestIdHeaders(c: Context, requestId: string): Record<string, string> {
  return c.req.path.startsWith("/v1/messages") || c.req.header("anthropic-version") !== undefined
    ? { "x-request-id": requestId, "request-id": requestId }
    : { "x-request-id": requestId };
}

/**
 * Responses made with their {@link requestIdHeaders} already in their headers (a streamed answer made ahead of its
 * first event, kit/run-surface.ts): the access log leaves their headers alone, so the way back from the first event
 * to the head written skips setting them (a web `Headers.set`, about 20 µs there in one-stream marks, docs/performance.md).
 */
const carriesRequestId = new WeakSet<Response>();

/** Notes that `response` was made with {@link requestIdHeaders} of its request (the access log then sets none). */
export function madeWithRequestId(response: Response): void {
  carriesRequestId.add(response);
}

/**
 * Creates the access-log middleware; it also sets `x-request-id` on every response (and Anthropic's `request-id` on
 * Anthropic-shaped ones). `onRecord` receives every
 * `/v1/` request once it is done (the status page's recent requests); `onRequestDone` listeners receive every request
 * once it is done (the gateway's metrics).
 */
export function accessLog(
  logger: Logger,
  now: () => number,
  newId: () => string,
  onRecord?: (record: RequestRecord) => void,
  onRequestDone: readonly RequestDoneListener[] = [],
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const log: RequestLog = { requestId: acceptedRequestId(c.req.header("x-request-id")) ?? newId(), startedAt: now() };
    c.set("log", log);
    await next();
    if (!carriesRequestId.has(c.res)) {
      for (const [name, value] of Object.entries(requestIdHeaders(c, log.requestId))) setResponseHeader(c, name, value);
    }
    const headersAt = now();
    // The error a surface's handler answered with (hono keeps it on the context), else one after the headers.
    const failure = c.error;
    const write = () => {
      const end = now();
      const streamError = log.streamError === undefined ? undefined : decideError(log.streamError);
      const failed = streamError ?? (failure === undefined ? undefined : decideError(failure));
      const path = clampForMessage(c.req.path, MAX_LOGGED_VALUE);
      const api = c.req.path.startsWith("/v1/");
      logger.info(`${c.req.method} ${path} ${c.res.status}`, {
        request_id: log.requestId,
        key: c.get("principal")?.keyName,
        model: log.model === undefined ? undefined : clampForMessage(log.model, MAX_LOGGED_VALUE),
        asked: log.model === "unknown" ? log.askedModel : undefined,
        params: log.params,
        conv: log.trace?.conversationId,
        run: log.trace?.runId,
        code: failed?.error.code,
        ttfb_ms: headersAt - log.startedAt,
        ttft_ms: log.firstTokenAt === undefined ? undefined : log.firstTokenAt - log.startedAt,
        total_ms: end - log.startedAt,
        tokens: log.tokens,
        web_searches: log.webSearches,
        web_fetches: log.webFetches,
        web_refused: log.webRefused,
        turn: log.route,
        parked: log.parked,
        stream_error: streamError?.error.code,
      });
      if (onRequestDone.length > 0) {
        const done: RequestDone = {
          method: c.req.method,
          path: c.req.path,
          surface: surfaceOf(c.req.path),
          api,
          status: c.res.status,
          log,
          principal: c.get("principal"),
          failure: failed,
          streamFailed: streamError !== undefined,
          endedAt: end,
        };
        for (const listener of onRequestDone) {
          try {
            listener(done);
          } catch (error) {
            logger.error("a request-done listener failed", { request_id: log.requestId, error });
          }
        }
      }
      if (onRecord !== undefined && api) {
        onRecord({
          at: log.startedAt,
          method: c.req.method,
          // Redacted here, once, for the page: a key pasted into a path (GET /v1/responses/sk-…) is never shown.
          path: redactText(path),
          surface: surfaceOf(c.req.path),
          client: redactOptional(clientOf(c.req.header("user-agent"))),
          model: log.model,
          params: log.params,
          route: log.route,
          parked: log.parked,
          ttftMs: log.firstTokenAt === undefined ? undefined : log.firstTokenAt - log.startedAt,
          totalMs: end - log.startedAt,
          tokens: log.tokens,
          webSearches: log.webSearches,
          webRefused: log.webRefused,
          status: c.res.status,
          streamError: streamError?.error.code,
          errorCode: failed?.error.code,
          errorMessage: failed === undefined ? undefined : clampForMessage(failed.message, MAX_LOGGED_VALUE),
        });
      }
    };
    if (log.streaming) void log.streaming.finally(write);
    else write();
  };
}
