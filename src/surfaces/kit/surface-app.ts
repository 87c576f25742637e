/**
 * Every API surface is its own Hono sub-app, mounted with `app.route("/v1", …)`: hono keeps a sub-app's error
 * handler for its routes, so each door answers every error (its request guards, its parse, its turn) in its own shape
 * with no guessing from headers or paths. The error decision is the kit's (error-policy.ts); the surface only
 * renders it. A request under the surface's prefix that matches none of its routes is its 404, in its shape.
 */
import type { Context, Next } from "hono";
import { Hono, type MiddlewareHandler } from "hono";
import { loadOnce, logUpdatedOnDisk } from "../../util/code-on-disk.js";
import { ProxyError } from "../../util/errors.js";
import { clampForMessage, type Logger } from "../../util/logger.js";
import type { AppEnv } from "./access-log.js";
import type { ErrorContext } from "./error-policy.js";
import type { SurfaceKit } from "./run-surface.js";

/** What the composition root hands every surface. */
export interface SurfaceDeps extends SurfaceKit {
  logger: Logger;
  newId: () => string;
  /** The request guards of every API request (local API key, JSON content type, body size, large-body gate). */
  guards: readonly MiddlewareHandler<AppEnv>[];
  /** The 404 for a path no route serves (lists the endpoints that exist). */
  routeNotFound: (method: string, path: string) => ProxyError;
}

/** Renders anything thrown as the surface's error response. */
export type ErrorRenderer = (error: unknown, context: ErrorContext) => Response;

/**
 * A surface's sub-app for the paths under `prefix` (relative to /v1, e.g. `/messages` for `/v1/messages` and
 * `/v1/messages/*`): the request guards, the surface's error renderer and, with {@link closeSurfaceApp}, its own 404.
 * The surface adds its routes in between.
 */
export function createSurfaceApp(deps: SurfaceDeps, prefix: string, render: ErrorRenderer): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const onError = (thrown: unknown, c: Context<AppEnv>) => {
    const requestId = c.get("log")?.requestId;
    const error = ProxyError.from(thrown);
    if (error.code === "internal") {
      deps.logger.error("unhandled error", { request_id: requestId, path: clampForMessage(c.req.path, 200), error });
    }
    logUpdatedOnDisk(error, deps.logger, clampForMessage(c.req.path, 200));
    // A virtual key's holder is a team member, not the operator (error-policy.ts).
    return render(error, { requestId, remote: c.get("principal") !== undefined });
  };
  if (deps.guards.length > 0) app.use(`${prefix}/*`, chainGuards(deps.guards, onError));
  app.onError(onError);
  return app;
}

/**
 * The guards as one middleware, doing what hono does for each of them when they are mounted one by one with
 * `app.use` on a sub-app with its own error handler (hono-base's `route()` wraps each in `compose([], onError)`, and
 * the app's `compose` runs the wrappers): each guard's error becomes the door's error response right where it is
 * thrown (so the guard before it sees that response after its `next()`, as it would), a response a guard returns is
 * set unless one is already final. Same behaviour, but one route and one wrapper per request instead of one per
 * guard: about a dozen fewer closures, promises and suspended frames for every request (docs/performance.md).
 */
export function chainGuards(
  guards: readonly MiddlewareHandler<AppEnv>[],
  onError: (error: Error, c: Context<AppEnv>) => Response | Promise<Response>,
): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    let index = -1;
    const settle = (res: Response | undefined, isError: boolean): void => {
      if (res && (c.finalized === false || isError)) c.res = res;
      // What the app's compose does with the response hono's wrapper hands back (`c.res`, made if none is set yet).
      const handed = c.res;
      if (c.finalized === false) c.res = handed;
    };
    const failed = async (error: unknown): Promise<void> => {
      if (!(error instanceof Error)) throw error;
      c.error = error;
      settle(await onError(error, c), true);
    };
    // Not an async function: a request in flight waits inside every guard's `next()` for its whole turn, and an
    // awaiting step per guard kept a suspended frame each; as promise reactions, nine guards hold 3.1 KB less per
    // request in flight (heap snapshots, docs/performance.md).
    const step = (i: number): Promise<void> => {
      if (i <= index) return Promise.reject(new Error("next() called multiple times"));
      index = i;
      const guard = guards[i];
      if (guard === undefined) return next();
      let ran: Promise<Awaited<ReturnType<MiddlewareHandler<AppEnv>>>>;
      try {
        ran = Promise.resolve(guard(c, () => step(i + 1)));
      } catch (error) {
        return failed(error);
      }
      return ran.then((res) => settle(res ?? undefined, false), failed);
    };
    return step(0) satisfies Promise<void> as ReturnType<Next>;
  };
}

/** Adds the surface's own 404 for paths under `prefix` none of its routes serve (call after adding the routes). */
export function closeSurfaceApp(app: Hono<AppEnv>, deps: SurfaceDeps, prefix: string): Hono<AppEnv> {
  app.all(`${prefix}/*`, (c) => {
    throw deps.routeNotFound(c.req.method, c.req.path);
  });
  return app;
}

/**
 * A door's request code, loaded on its first request and kept (`load` is the door's own `import()` of its handlers,
 * so the bundle keeps them in a chunk of their own): a start serves /health without compiling any door. When the load
 * fails because its file is gone (dist/ changed under the running server: util/code-on-disk.ts), every request of the
 * door is answered 503 `server_updated` in the door's shape, saying to restart, and the load is not retried; any other
 * failure is that request's own error, and the next request loads again.
 */
export function loadedOnFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  return loadOnce(load);
}
