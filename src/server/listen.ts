/**
 * Binds the app to a Node HTTP server. Refuses a non-loopback address without a local API key (issue 5 security
 * defaults) with config/'s own check, repeated here so no composition root can forget it.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { assertSafeBinding } from "../config/host.js";
import { ProxyError } from "../util/errors.js";

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
}

/** Starts listening; rejects with a clear error when the port is taken or the bind is unsafe. */
export async function listen(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: ListenOptions,
): Promise<RunningServer> {
  assertSafeBinding(options);
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
