/**
 * The requests a server is serving, and how it stops gracefully (server/listen.ts): at once it takes no new work (the
 * listening socket closes, so new connections are refused; a request that still arrives on a connection already open
 * is answered 503 `server_shutting_down` with `Connection: close` once its body has arrived, read and dropped, and
 * counts as in flight until then), then it waits for the requests in flight, up to a
 * drain time. When that is up, the caller ends the ones left (each turn ends with its door's final error event,
 * util/shutdown-notice.ts) and they get {@link FINAL_FRAMES_MS} to write it before every connection is cut.
 *
 * A connection whose request was still arriving when the drain began (its headers, or its body before the app saw
 * it) is not cut: the drain waits for it as for a request in flight, up to the same drain time. Once its headers are
 * in, it is answered like any late request (the 503 above, with `Connection: close`); a request whose headers had
 * arrived is in flight already and completes. Only the idle connections close at once (Node's `server.close()` closes
 * those with no request under way); the drain is over when every connection is closed.
 *
 * Why the listening socket closes instead of answering 503 to new connections: a refused connection is the one
 * failure every client and load balancer retries on its own for any request, a POST included, because nothing was
 * sent (HAProxy's default `retry-on conn-failure`, nginx's `proxy_next_upstream error`, the SDKs' connection
 * retries), and a health check sees it at once; a 503 to a POST reaches the client, and a balancer passes it on.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { shuttingDown } from "../util/shutdown-notice.js";

/**
 * How long the requests still open when the drain time is up get to write their final error frames. It comes on top
 * of the drain time: the default drain (config/settings.ts DEFAULT_DRAIN_TIMEOUT_MS) leaves room for it and for
 * closing the stores inside `docker stop`'s 10 s grace before SIGKILL.
 */
export const FINAL_FRAMES_MS = 2_000;

/** Options of a graceful stop ({@link RequestsInFlight.drain}). */
export interface DrainOptions {
  /** Longest wait for the requests in flight, in ms (0: none; they end at once). */
  timeoutMs: number;
  /** Told at once how many requests are in flight. */
  onDrain?: ((inFlight: number) => void) | undefined;
  /**
   * The drain time is up with `inFlight` requests still open: end them now (their door's final error); they then get
   * {@link FINAL_FRAMES_MS} before their connections are cut.
   */
  onTimeout?: ((inFlight: number) => void) | undefined;
}

/** The requests being served, for a graceful stop. */
export class RequestsInFlight {
  private readonly open = new Set<ServerResponse>();
  /** Every open connection: one whose request is still arriving holds the drain as a request in flight does. */
  private readonly connections = new Set<Socket>();
  private emptied: (() => void) | undefined;
  /** True from the start of a drain: new requests are refused. */
  draining = false;

  constructor(private readonly server: Server) {
    server.on("connection", (socket: Socket) => {
      this.connections.add(socket);
      socket.once("close", () => {
        this.connections.delete(socket);
        if (this.draining && this.connections.size === 0) this.emptied?.();
      });
    });
  }

  get size(): number {
    return this.open.size;
  }

  /** Counts `res` as in flight until it closes; `closed` runs then too (one listener per request). */
  track(res: ServerResponse, closed?: () => void): void {
    this.open.add(res);
    res.once("close", () => {
      this.open.delete(res);
      closed?.();
      if (!this.draining) return;
      // Its connection is idle once the response is written: close it (the client must not send it another request).
      setImmediate(() => this.server.closeIdleConnections());
    });
  }

  /** Refuses a request that arrived while the server drains ({@link answerShuttingDown}), counted as in flight. */
  refuse(req: IncomingMessage, res: ServerResponse): void {
    this.track(res);
    answerShuttingDown(req, res);
  }

  /**
   * Stops the server gracefully (see the module's comment) and resolves once it is closed, every connection with it.
   */
  async drain(options: DrainOptions): Promise<void> {
    this.draining = true;
    // Node closes the connections that are idle now; those serving a request close once their response is written.
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const res of this.open) if (!res.headersSent) res.shouldKeepAlive = false;
    options.onDrain?.(this.open.size);
    if (!(await this.settled(options.timeoutMs)) && this.open.size > 0) {
      options.onTimeout?.(this.open.size);
      await this.settled(FINAL_FRAMES_MS);
    }
    this.server.closeAllConnections();
    await closed;
  }

  /**
   * Resolves true once every connection is closed (no request in flight, none still arriving), false when `ms`
   * passed first.
   */
  private settled(ms: number): Promise<boolean> {
    if (this.connections.size === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.emptied = undefined;
        resolve(false);
      }, ms);
      this.emptied = () => {
        clearTimeout(timer);
        this.emptied = undefined;
        resolve(true);
      };
    });
  }
}

/**
 * Runs `answer` once the request's body has arrived, read and dropped. An answer that closes its connection while the
 * client still uploads resets the connection, and the reset can reach the client before the answer does (the same
 * reason body-limit.ts reads a body over the limit to its end before its 413). Nothing runs when the client leaves
 * first; the listener's body timeout bounds the wait.
 */
export function afterBody(req: IncomingMessage, answer: () => void): void {
  if (req.complete) {
    req.resume();
    answer();
    return;
  }
  const ended = () => {
    req.off("close", ended);
    if (req.complete) answer();
  };
  req.once("end", ended);
  req.once("close", ended);
  req.resume();
}

/**
 * Answers a request that arrived while the server drains: 503 `server_shutting_down`, in Anthropic's shape for
 * `/v1/messages` (`overloaded_error`, which its clients retry) and OpenAI's otherwise, with `x-should-retry: true` and
 * `Connection: close`, once its body has been read and dropped ({@link afterBody}). The same bodies as the doors' own
 * renderers give that error (held equal by the tests).
 */
export function answerShuttingDown(req: IncomingMessage, res: ServerResponse): void {
  afterBody(req, () => writeShuttingDown(req, res));
}

function writeShuttingDown(req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent || res.destroyed) return;
  const { message } = shuttingDown(false);
  const anthropic = /^\/v1\/messages(?:[/?]|$)/.test(req.url ?? "");
  const body = JSON.stringify(
    anthropic
      ? { type: "error", error: { type: "overloaded_error", message } }
      : { error: { message, type: "server_error", param: null, code: "server_shutting_down" } },
  );
  res.writeHead(503, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "x-should-retry": "true",
    connection: "close",
  });
  res.end(body);
}
