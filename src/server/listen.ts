/**
 * Binds the app to a Node HTTP server. Refuses a non-loopback address without a local API key (a security
 * default) with config/'s own check, repeated here so no composition root can forget it.
 */
import { type Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { assertSafeBinding } from "../config/host.js";
import { ProxyError } from "../util/errors.js";
import { coalesceWritesPerTurn } from "./write-coalescing.js";

/** A listening server. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, drops open connections (keep-alive and streams) and resolves when closed. */
  close(): Promise<void>;
}

/** Listen options. */
export interface ListenOptions {
  host: string;
  port: number;
  apiKey: string | undefined;
  /** A request whose headers and body have not fully arrived after this long is answered 408 and dropped. */
  bodyTimeoutMs?: number;
}

/** Default of {@link ListenOptions.bodyTimeoutMs}. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    "Request Timeout",
    "The request body did not arrive in time; the request was dropped.",
  ],
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "The request headers are too large."],
};

/**
 * Answers a malformed or too slow request with an OpenAI-shaped error instead of Node's bare status line, then
 * drops the connection. Nothing is written once a response has started on that connection.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true && error.code !== "ECONNRESET") {
    const [status, reason, message] = CLIENT_ERRORS[error.code ?? ""] ?? [
      400,
      "Bad Request",
      "Malformed HTTP request.",
    ];
    const type = status === 408 ? "timeout_error" : "invalid_request_error";
    const code = status === 408 ? "request_timeout" : status === 431 ? "headers_too_large" : "bad_http_request";
    const body = JSON.stringify({ error: { message, type, param: null, code } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Starts listening; rejects with a clear error when the port is taken or the bind is unsafe. */
export async function listen(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: ListenOptions,
): Promise<RunningServer> {
  assertSafeBinding(options);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const server = createAdaptorServer({
    fetch: (request, env) => {
      // Always an HTTP/1.1 ServerResponse here: the server is created without HTTP/2.
      if (env?.outgoing instanceof ServerResponse) coalesceWritesPerTurn(env.outgoing);
      return app.fetch(request);
    },
    hostname: options.host,
    serverOptions: {
      // Node drops a request that has not fully arrived within requestTimeout, checked every
      // connectionsCheckingInterval (default 30 s, so a 30 s limit could take 60 s); headers count toward it too.
      requestTimeout: bodyTimeoutMs,
      headersTimeout: Math.min(60_000, bodyTimeoutMs),
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(bodyTimeoutMs / 4))),
    },
  }) as Server;
  server.on("clientError", answerClientError);
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
    server.listen(options.port, options.host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
