/**
 * One log line per request: method, path, model, status, time to first byte, time to first token, total
 * time, tokens, and how the Cursor turn was reached (new / continued / resumed / replayed) and whether it was left parked.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";

/** Facts gathered while a request is handled. */
export interface RequestLog {
  requestId: string;
  startedAt: number;
  model?: string;
  route?: "new" | "continued" | "resumed" | "replayed";
  parked?: boolean;
  firstTokenAt?: number;
  tokens?: number;
  streamError?: unknown;
  /** Set by streaming handlers: settles when the body has been fully written or abandoned. */
  streaming?: Promise<void>;
}

/** Hono variables set by the app's middleware. */
export type AppEnv = { Variables: { log: RequestLog } };

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

/** Creates the access-log middleware; it also sets `x-request-id` on every response. */
export function accessLog(logger: Logger, now: () => number, newId: () => string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const log: RequestLog = { requestId: c.req.header("x-request-id")?.slice(0, 100) ?? newId(), startedAt: now() };
    c.set("log", log);
    await next();
    setResponseHeader(c, "x-request-id", log.requestId);
    const headersAt = now();
    const write = () => {
      const end = now();
      const error = log.streamError === undefined ? undefined : ProxyError.from(log.streamError);
      logger.info(`${c.req.method} ${c.req.path} ${c.res.status}`, {
        request_id: log.requestId,
        model: log.model,
        ttfb_ms: headersAt - log.startedAt,
        ttft_ms: log.firstTokenAt === undefined ? undefined : log.firstTokenAt - log.startedAt,
        total_ms: end - log.startedAt,
        tokens: log.tokens,
        turn: log.route,
        parked: log.parked,
        stream_error: error?.code,
      });
    };
    if (log.streaming) void log.streaming.finally(write);
    else write();
  };
}
