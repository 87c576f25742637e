/**
 * Binds the app to a Node HTTP server. Refuses a non-loopback address without a local API key (a security
 * default) with config/'s own check, repeated here so no composition root can forget it.
 *
 * The port can be bound before the app exists ({@link bind}, used by `serve` to print its listening line before it
 * loads the API): requests that arrive until {@link PendingServer.serve} are held, unread, and then served by the app
 * in arrival order, through every check the app makes (Host/Origin, API key, body limits); `/health` is one of them,
 * so it answers only once the API serves. Node's own limits (header size, {@link ListenOptions.bodyTimeoutMs}) apply
 * to held requests as to any other.
 */
import { createServer, type IncomingMessage, type Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { assertSafeBinding } from "../config/host.js";
import { ProxyError } from "../util/errors.js";
import { directBodyOf, unchangedHeadersOf } from "../util/pull-body.js";
import { afterBody, type DrainOptions, RequestsInFlight } from "./drain.js";
import type { IdleMemory } from "./idle-memory.js";
import { coalesceWritesPerTurn, flushHeadersCoalesced } from "./write-coalescing.js";

/** A listening server. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, drops open connections (keep-alive and streams) and resolves when closed. */
  close(): Promise<void>;
  /**
   * Stops gracefully (server/drain.ts): refuses new connections and answers a new request on an open one 503, waits
   * for the requests in flight up to `timeoutMs`, lets `onTimeout` end the rest, then closes. Resolves when closed.
   */
  shutdown(options: DrainOptions): Promise<void>;
}

/** The app's request handler. */
export interface FetchApp {
  /** `env` holds Node's `incoming` request and `outgoing` response (as @hono/node-server passes them: Hono's `c.env`; the socket's peer address decides who may read /metrics and is audited for the admin API). */
  fetch: (request: Request, env?: { incoming: unknown; outgoing: unknown }) => Response | Promise<Response>;
}

/** A bound port whose requests are held until an app serves them. */
export interface PendingServer extends RunningServer {
  /** Requests held so far, waiting for {@link serve} (0 once it serves). */
  readonly waiting: number;
  /** Serves `app` from now on, the held requests first (in arrival order). Once only. */
  serve(app: FetchApp): Promise<void>;
  /**
   * For a start that failed: answers the held requests (and any later one) 503 with `message`, then closes the
   * server like {@link RunningServer.close}.
   */
  fail(message: string): Promise<void>;
}

/** Listen options. */
export interface ListenOptions {
  host: string;
  port: number;
  apiKey: string | undefined;
  /** A request whose headers and body have not fully arrived after this long is answered 408 and dropped. */
  bodyTimeoutMs?: number;
  /** Told when each request starts and ends (gives memory back once the server goes quiet after load). */
  idleMemory?: IdleMemory;
}

/** Default of {@link ListenOptions.bodyTimeoutMs}. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/**
 * How many connections the kernel may hold, handshake done, before serve accepts them (Linux clamps it to
 * `net.core.somaxconn`, 4096 by default since 5.4). Node's default of 511 is too few for a burst: when a thousand
 * clients connect at once while serve's thread is busy, the connections past the queue's end have their SYN dropped,
 * and each of those clients waits for its retransmission, a whole second later, before it can send its request.
 */
export const LISTEN_BACKLOG = 4096;

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    "Request Timeout",
    "The request body did not arrive in time; the request was dropped.",
  ],
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "The request headers are too large."],
};

/**
 * Answers a malformed or too slow request with an error in its API's shape instead of Node's bare status line, then
 * drops the connection: Anthropic's for a request whose headers named `/v1/messages` (a body that came too slowly),
 * OpenAI's otherwise (nothing said which API it was for). Nothing is written once a response has started on that
 * connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { url?: string } } })
    ._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true && error.code !== "ECONNRESET") {
    const [status, reason, message] = CLIENT_ERRORS[error.code ?? ""] ?? [
      400,
      "Bad Request",
      "Malformed HTTP request.",
    ];
    const type = status === 408 ? "timeout_error" : "invalid_request_error";
    const code = status === 408 ? "request_timeout" : status === 431 ? "headers_too_large" : "bad_http_request";
    const anthropic = /^\/v1\/messages(?:[/?]|$)/.test(inFlight?.req?.url ?? "");
    const body = JSON.stringify(
      anthropic ? { type: "error", error: { type, message } } : { error: { message, type, param: null, code } },
    );
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Answers a request the server will never serve (its start failed) with an OpenAI-shaped 503, after its body. */
function answerUnavailable(req: IncomingMessage, res: ServerResponse, message: string): void {
  afterBody(req, () => writeUnavailable(res, message));
}

function writeUnavailable(res: ServerResponse, message: string): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ error: { message, type: "server_error", param: null, code: "backend_unavailable" } });
  res.writeHead(503, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body);
}

/**
 * Binds host:port now and holds every request until {@link PendingServer.serve} gives it an app; rejects with a
 * clear error when the port is taken or the bind is unsafe.
 */
export async function bind(options: ListenOptions): Promise<PendingServer> {
  assertSafeBinding(options);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const held: Array<[IncomingMessage, ServerResponse]> = [];
  let handle = (req: IncomingMessage, res: ServerResponse): void => {
    held.push([req, res]);
  };
  const server: Server = createServer(
    {
      // Node drops a request that has not fully arrived within requestTimeout, checked every
      // connectionsCheckingInterval (default 30 s, so a 30 s limit could take 60 s); headers count toward it too.
      requestTimeout: bodyTimeoutMs,
      headersTimeout: Math.min(60_000, bodyTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(bodyTimeoutMs / 4))),
    },
    (req, res) => handle(req, res),
  );
  server.on("clientError", answerClientError);
  const inFlight = new RequestsInFlight(server);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new ProxyError(
          "invalid_request",
          error.code === "EADDRINUSE"
            ? `Port ${options.port} on ${options.host} is already in use. Pick another with --port.`
            : `Cannot listen on ${options.host}:${options.port}: ${error.message}`,
          { cause: error },
        ),
      );
    };
    server.once("error", onError);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  if (address !== options.host) {
    // A name that passed as loopback (`localhost`, `*.localhost`) is resolved by the system (/etc/hosts, DNS): what
    // counts is the address it gave, which anyone who can reach it may connect to (sending `Host: localhost`).
    try {
      assertSafeBinding({ host: address, apiKey: options.apiKey });
    } catch (error) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      throw new ProxyError(
        "invalid_request",
        `--host ${options.host} resolves to ${address} on this machine, not to a loopback address. ${
          ProxyError.from(error).message
        }`,
        { param: "host", detail: "unsafe_binding" },
      );
    }
  }
  const hostForUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  const close = () =>
    new Promise<void>((resolve) => {
      options.idleMemory?.close();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  let settled = false;
  /** Hands the held requests, then every new one, to `next` (those whose client left meanwhile are dropped). */
  const switchTo = (next: (req: IncomingMessage, res: ServerResponse) => void) => {
    if (settled) throw new Error("This server already serves an app.");
    settled = true;
    handle = next;
    for (const [req, res] of held.splice(0)) {
      if (res.destroyed || req.socket.destroyed) continue;
      next(req, res);
    }
  };
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    get waiting() {
      return held.length;
    },
    close,
    async shutdown(drain) {
      options.idleMemory?.close();
      // Not serving yet: the held requests, and any later one, are refused like those of a draining server (and
      // counted in flight, so the drain waits for their answers instead of cutting their connections at once).
      if (!settled) switchTo((req, res) => inFlight.refuse(req, res));
      await inFlight.drain(drain);
    },
    async serve(app) {
      // Loaded here, not at the top: Hono's Node adapter pulls in Node's fetch classes, which the bind does not need.
      const { getRequestListener } = await import("@hono/node-server");
      const listener = getRequestListener(
        (request, env) => {
          const outgoing = env?.outgoing;
          // Always an HTTP/1.1 ServerResponse here: the server is created without HTTP/2.
          if (!(outgoing instanceof ServerResponse)) return app.fetch(request, env);
          coalesceWritesPerTurn(outgoing);
          // The bindings reach the app as `c.env` (the peer address for /metrics and the audit log; the team
          // gateway's cost trailers on Node's response).
          const answer = app.fetch(request, env);
          return answer instanceof Promise
            ? answer.then((r) => writeDirect(r, outgoing))
            : writeDirect(answer, outgoing);
        },
        { hostname: options.host },
      );
      const idle = options.idleMemory;
      const idleAgain = idle === undefined ? undefined : () => idle.end();
      switchTo((req, res) => {
        if (inFlight.draining) {
          inFlight.refuse(req, res);
          return;
        }
        idle?.begin();
        inFlight.track(res, idleAgain);
        void listener(req, res);
      });
    },
    async fail(message) {
      switchTo((req, res) => answerUnavailable(req, res, message));
      // Connections still in the accept backlog are accepted in the next poll phase (two immediates span one);
      // closing the listening socket first would reset them instead of answering.
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
      // Stop accepting, then let the connections already open send their requests and get the 503 (each answer
      // closes its connection); whatever is still open after a second is cut off.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      server.closeAllConnections();
      await closed;
    },
  };
}

/** What the adapter is given for a response this module wrote itself (@hono/node-server's `x-hono-already-sent`). */
let alreadySent: Response | undefined;

/**
 * A streamed response whose body is a pull body (util/pull-body.ts) is written here, straight to the socket's
 * response, instead of through the adapter's web-stream reader: one promise per frame instead of a reader, a web
 * stream pull and an encoder per frame. Any other response goes to the adapter as it is.
 */
function writeDirect(response: Response, res: ServerResponse): Response {
  const write = directBodyOf(response);
  if (write === undefined) return response;
  let headers = unchangedHeadersOf(response);
  if (headers === undefined) {
    const all: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      all[key] = value;
    });
    headers = all;
  }
  res.writeHead(response.status, headers);
  flushHeadersCoalesced(res);
  // A write that throws (it should not) drops the connection rather than leaving the client waiting.
  write(res).catch((error: unknown) => res.destroy(error instanceof Error ? error : new Error(String(error))));
  if (alreadySent === undefined) {
    alreadySent = new Response(null, { headers: { "x-hono-already-sent": "true" } });
    // The adapter's lightweight Response keeps its fields in a cache it reads on a path without the already-sent
    // check; reading any other field turns it into a full Response, which the adapter checks (and writes nothing).
    void alreadySent.type;
  }
  return alreadySent;
}

/** Starts listening and serving `app`; rejects with a clear error when the port is taken or the bind is unsafe. */
export async function listen(app: FetchApp, options: ListenOptions): Promise<RunningServer> {
  const server = await bind(options);
  await server.serve(app);
  return { url: server.url, port: server.port, close: server.close, shutdown: server.shutdown };
}
