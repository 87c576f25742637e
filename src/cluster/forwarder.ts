/**
 * The HTTP side of {@link TurnForwarder}: a tool result for a turn parked on another instance is sent to that
 * instance's `/internal/cluster/turn` (signed with the cluster secret) and its turn is relayed frame by frame.
 * When the owner is gone (no directory entry, or nothing answers at its URL) the caller runs the turn itself.
 */
import type { BackendEvent } from "../backend/types.js";
import type { EngineRequest, EngineTurn, TurnForwarder } from "../engine/index.js";
import { ProxyError } from "../util/errors.js";
import { type Logger, silentLogger } from "../util/logger.js";
import { CLUSTER_HEADER, type ClusterAuth } from "./cluster-auth.js";
import { type InstanceDirectory, instanceOfToolCallId } from "./instance.js";
import { encodeEngineRequest, FORWARD_PATH, fromWireError, RELEASE_PATH, readFrames, type TurnFrame } from "./wire.js";

export { FORWARD_PATH, RELEASE_PATH };

/** Options of {@link createTurnForwarder}. */
export interface TurnForwarderOptions {
  selfTag: string;
  directory: InstanceDirectory;
  auth: ClusterAuth;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** How long connecting to the owner may take before it counts as gone. @default 3000 */
  connectTimeoutMs?: number;
  logger?: Logger;
}

/** True when fetch failed before any answer because nothing listened (the owner is gone). */
function isUnreachable(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? cause.code : "";
  return [
    "ECONNREFUSED",
    "ECONNRESET",
    "EHOSTUNREACH",
    "ENOTFOUND",
    "UND_ERR_CONNECT_TIMEOUT",
    "UND_ERR_SOCKET",
  ].includes(code);
}

/**
 * True when the owner answered as a stopping server answers a request that reaches it during its drain (503
 * `server_shutting_down`, JSON rather than the turn's frames); the body is read only then.
 */
async function refusedAsStopping(response: Response): Promise<boolean> {
  if (response.status !== 503 || (response.headers.get("content-type") ?? "").includes("ndjson")) return false;
  const body = (await response.json().catch(() => undefined)) as { error?: { code?: unknown } } | undefined;
  return body?.error?.code === "server_shutting_down";
}

/** Creates the forwarder. */
export function createTurnForwarder(options: TurnForwarderOptions): TurnForwarder {
  const logger = options.logger ?? silentLogger;
  const doFetch = options.fetch ?? fetch;
  const connectTimeoutMs = options.connectTimeoutMs ?? 3000;

  return {
    ownerOf(toolCallIds) {
      const first = toolCallIds[0];
      const tag = first === undefined ? undefined : instanceOfToolCallId(first);
      return tag === undefined || tag === options.selfTag ? undefined : tag;
    },
    async release(owner, release, signal) {
      try {
        const url = await options.directory.urlOf(owner);
        if (url === undefined) return undefined;
        const body = JSON.stringify(release);
        const response = await doFetch(new URL(RELEASE_PATH, url), {
          method: "POST",
          headers: { "content-type": "application/json", [CLUSTER_HEADER]: options.auth.sign(body) },
          body,
          signal: AbortSignal.any([signal, AbortSignal.timeout(connectTimeoutMs)]),
        });
        const answer = (await response.json().catch(() => undefined)) as { released?: unknown } | undefined;
        if (!response.ok || typeof answer?.released !== "number") {
          logger.info("the instance holding a parked turn did not take its release", {
            owner,
            status: response.status,
          });
          return undefined;
        }
        if (answer.released > 0) logger.debug("the instance holding a parked turn closed it", { owner });
        return answer.released;
      } catch (error) {
        // Its parked turn then waits for its TTL, as it did before instances told each other.
        if (!signal.aborted)
          logger.info("could not tell the instance holding a parked turn to close it", { owner, error });
        return undefined;
      }
    },
    async forward(owner: string, request: EngineRequest, signal: AbortSignal): Promise<EngineTurn | undefined> {
      const url = await options.directory.urlOf(owner);
      if (url === undefined) return undefined;
      const body = encodeEngineRequest(request);
      const connect = AbortSignal.timeout(connectTimeoutMs);
      const controller = new AbortController();
      const abort = () => controller.abort(signal.reason);
      signal.addEventListener("abort", abort, { once: true });
      // Bounds the wait for the owner's answer to begin (its headers), not the turn it relays.
      const connectTimedOut = () => controller.abort(connect.reason);
      connect.addEventListener("abort", connectTimedOut, { once: true });
      let response: Response;
      try {
        response = await doFetch(new URL(FORWARD_PATH, url), {
          method: "POST",
          headers: { "content-type": "application/json", [CLUSTER_HEADER]: options.auth.sign(body) },
          body,
          signal: controller.signal,
        });
      } catch (error) {
        signal.removeEventListener("abort", abort);
        if (signal.aborted) throw ProxyError.from(error);
        if (isUnreachable(error) || connect.aborted) {
          logger.info("could not reach the instance holding the turn", { owner, url, error });
          return undefined;
        }
        throw new ProxyError("backend_unavailable", `Could not forward the tool results to instance ${owner}.`, {
          cause: error,
          detail: "instance_unreachable",
        });
      }
      // Connected: from here on only the caller's signal cancels the relay.
      connect.removeEventListener("abort", connectTimedOut);
      const release = () => signal.removeEventListener("abort", abort);
      if (await refusedAsStopping(response)) {
        // The owner is stopping (server/drain.ts): it will close the parked turn without running it, so the turn
        // continues here from its checkpoint, as when the owner is gone.
        release();
        logger.info("the instance holding the turn is shutting down", { owner, url });
        return undefined;
      }
      const frames =
        response.body === null ? undefined : readFrames(response.body as unknown as AsyncIterable<Uint8Array>);
      const first = await frames?.next();
      const start = first?.done === false ? first.value : undefined;
      if (start?.type === "error") {
        release();
        throw fromWireError(start.error);
      }
      if (start?.type !== "start" || frames === undefined) {
        release();
        throw new ProxyError(
          "backend_unavailable",
          `Instance ${owner} answered the forwarded turn with HTTP ${response.status}.`,
          {
            detail: "instance_unreachable",
          },
        );
      }
      logger.debug("forwarded tool results to the instance holding the turn", { owner, route: start.route });
      const state = { parked: false };
      async function* relay(source: AsyncGenerator<TurnFrame>): AsyncGenerator<BackendEvent> {
        try {
          for await (const frame of source) {
            if (frame.type === "event") yield frame.event;
            else if (frame.type === "error") throw fromWireError(frame.error);
            else if (frame.type === "end") {
              state.parked = frame.parked;
              return;
            }
          }
          throw new ProxyError("backend_unavailable", `Instance ${owner} ended the forwarded turn early.`, {
            detail: "instance_unreachable",
          });
        } catch (error) {
          if (error instanceof ProxyError) throw error;
          throw new ProxyError("backend_unavailable", `Lost instance ${owner} during the forwarded turn.`, {
            cause: error,
            detail: "instance_unreachable",
          });
        } finally {
          release();
          controller.abort();
        }
      }
      return {
        route: start.route,
        model: start.model,
        events: relay(frames),
        get parked() {
          return state.parked;
        },
      };
    },
  };
}
