/**
 * `POST /internal/cluster/turn`: a tool result another instance received for a turn parked here. Only instances
 * sharing the cluster secret may call it (signed body, see cluster/cluster-auth.ts); the Host and Origin rules apply
 * as to every request. The turn runs through this instance's engine (never forwarded again) and goes back as
 * newline-delimited JSON frames that the calling instance turns into its own surface's answer.
 *
 * It ends as a turn of this instance's own doors does when the server stops (util/shutdown-notice.ts): when the drain
 * time is up, the turn is aborted with the shutting-down error, which goes back as the last frame, so the client of
 * the calling instance gets its door's `server_shutting_down` error instead of a cut stream.
 */
import type { Context } from "hono";
import type { BackendEvent } from "../backend/types.js";
import { CLUSTER_HEADER, type ClusterAuth } from "../cluster/cluster-auth.js";
import { decodeEngineRequest, decodeParkedRelease, type TurnFrame, toWireError } from "../cluster/wire.js";
import type { BridgeEngine } from "../engine/index.js";
import type { AppEnv } from "../surfaces/kit/access-log.js";
import { ProxyError } from "../util/errors.js";
import { pullBody, streamedResponse } from "../util/pull-body.js";
import type { ShutdownNotice } from "../util/shutdown-notice.js";

const line = (frame: TurnFrame) => `${JSON.stringify(frame)}\n`;

const NDJSON = { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" };

/** Refuses a request that is not signed with the cluster secret (or was seen before). */
async function checkSigned(c: Context<AppEnv>, auth: ClusterAuth, body: string): Promise<void> {
  if (!(await auth.accept(body, c.req.header(CLUSTER_HEADER)))) {
    throw new ProxyError(
      "permission_denied",
      "This route is for instances sharing the cluster secret (each signed request is accepted once).",
      { detail: "permission_denied" },
    );
  }
}

/**
 * `POST /internal/cluster/release`: another instance's request moved on past tool calls this instance handed out (a
 * new message instead of their results); the turn parked on them, of the same key and account, is closed here as a
 * local move-on closes it (engine.ts). Answers `{"released": n}`.
 */
export async function handleParkedRelease(
  c: Context<AppEnv>,
  engine: BridgeEngine,
  auth: ClusterAuth,
): Promise<Response> {
  const body = await c.req.text();
  await checkSigned(c, auth, body);
  const released = (await engine.releaseParked?.(decodeParkedRelease(body))) ?? 0;
  return c.json({ released });
}

/** Handles one forwarded turn. */
export async function handleForwardedTurn(
  c: Context<AppEnv>,
  engine: BridgeEngine,
  auth: ClusterAuth,
  shutdown?: ShutdownNotice,
): Promise<Response> {
  const body = await c.req.text();
  await checkSigned(c, auth, body);
  const log = c.get("log");
  // A malformed request is a 400 before anything watches the request or the shutdown.
  const request = decodeEngineRequest(body);
  // Aborted when the calling instance goes away, or with the shutting-down error when this server's drain time is up.
  const abort = new AbortController();
  const gone = c.req.raw.signal;
  const onGone = () => abort.abort(gone.reason);
  if (gone.aborted) onGone();
  else gone.addEventListener("abort", onGone, { once: true });
  const stopWatchingShutdown = shutdown?.watch((reason) => abort.abort(reason));
  const stopWatching = () => {
    gone.removeEventListener("abort", onGone);
    stopWatchingShutdown?.();
  };
  // The answer's headers go out now, before the turn's first event: the calling instance gives a connection a few
  // seconds to answer before it counts this instance as gone and runs the turn itself, and a resumed turn's first
  // event may take longer than that (a model thinking over the results). The turn's start, or its error, is the
  // first frame.
  const starting = engine.startTurn(request, abort.signal, { forwarded: true });
  starting.catch(() => {});
  let turn: Awaited<typeof starting> | undefined;
  let iterator: AsyncIterator<BackendEvent> | undefined;
  let resolveDone: () => void = () => {};
  log.streaming = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const stream = pullBody(
    {
      async read() {
        if (turn === undefined) {
          try {
            turn = await starting;
          } catch (error) {
            // Ended by this server's shutdown: its error, not the abort's echo.
            throw abort.signal.aborted && !gone.aborted ? abort.signal.reason : error;
          }
          log.route = turn.route;
          log.model = turn.model.id;
          iterator = turn.events[Symbol.asyncIterator]();
          return { frame: line({ type: "start", route: turn.route, model: turn.model }), last: false };
        }
        const next = await (iterator as AsyncIterator<BackendEvent>).next();
        if (next.done === true) {
          log.parked = turn.parked === true;
          return { frame: line({ type: "end", parked: turn.parked === true }), last: true };
        }
        return { frame: line({ type: "event", event: next.value }), last: false };
      },
      errorFrame: (error) => line({ type: "error", error: toWireError(error) }),
      release: async () => {
        abort.abort(gone.reason);
        if (iterator !== undefined) return iterator.return?.();
        // Started after the caller left: its events are never read, so they are let go here.
        const late = await starting.catch(() => undefined);
        return late?.events[Symbol.asyncIterator]().return?.();
      },
    },
    {
      onError: (error) => {
        log.streamError = error;
      },
      onEnd: () => {
        stopWatching();
        resolveDone();
      },
    },
  );
  return streamedResponse(stream, { status: 200, headers: NDJSON });
}
