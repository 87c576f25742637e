/**
 * Binds the app to a Node HTTP server. Refuses a non-loopback address without a local API key (issue 5 security
 * defaults); the check lives here as well as in config/ so no composition root can forget it.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { ProxyError } from "../util/errors.js";

/** A listening server. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, drops open connections (keep-alive and streams) and resolves when closed. */
  close(): Promise<void>;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackAddress(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/** Listen options. */
export interface ListenOptions {
  host: string;
  port: number;
  apiKey: string | undefined;
}

/** Starts listening; rejects with a clear error when the port is taken or the bind is unsafe. */
export async function listen(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: ListenOptions,
): Promise<RunningServer> {
  if (!isLoopbackAddress(options.host) && options.apiKey === undefined) {
    throw new ProxyError(
      "invalid_request",
      `Refusing to listen on ${options.host} without an API key: anyone on the network could use your Cursor account. ` +
        "Set --api-key (or CURSOR_BRIDGE_API_KEY), or bind 127.0.0.1.",
    );
  }
  const server = createAdaptorServer({ fetch: (request) => app.fetch(request), hostname: options.host }) as Server;
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
