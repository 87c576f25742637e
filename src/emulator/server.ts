/**
 * One TCP port serving HTTP/2 cleartext (prior knowledge) and HTTP/1.1 (docs/protocol.md §4.2, §4.3): each new
 * connection is sniffed for the 24-byte HTTP/2 client preface and handed to an http2 or an http1 server.
 */
import { createServer as createHttp1Server } from "node:http";
import { createServer as createHttp2Server } from "node:http2";
import type { Socket } from "node:net";
import { type ReservedListener, reserveListener } from "../util/reserved-listener.js";
import type { NodeRequest, NodeResponse } from "./auth.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** A listening dual-protocol server. */
export interface DualServer {
  readonly port: number;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** Request handler shared by both protocols. */
export type DualHandler = (req: NodeRequest, res: NodeResponse) => void;

/** Transport limits of {@link listenDual}. */
export interface DualServerOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS advertised on every HTTP/2 connection; undefined = Node's (unlimited). */
  maxConcurrentStreams?: number | undefined;
}

/** Starts listening on host:port (0 = any free port), or serves a port bound earlier (`reserved`). */
export async function listenDual(
  handler: DualHandler,
  host: string,
  port: number,
  reserved?: ReservedListener,
  options: DualServerOptions = {},
): Promise<DualServer> {
  const http1 = createHttp1Server(handler);
  // Node refuses new streams (RST_STREAM ENHANCE_YOUR_CALM) once a session buffers more than maxSessionMemory (10 MB
  // by default): a handful of concurrent multi-megabyte turns on one connection would be refused. Cursor's servers
  // have no such small limit, so the emulator must not invent one.
  // The limit goes out in the server's SETTINGS: a client wanting more concurrent Runs must open more connections
  // (Node's own client holds a stream over the limit back until another stream of the connection closes).
  const max = options.maxConcurrentStreams;
  const http2 = createHttp2Server(
    { maxSessionMemory: 1024, ...(max === undefined ? {} : { settings: { maxConcurrentStreams: max } }) },
    handler,
  );
  const sockets = new Set<Socket>();
  const onConnection = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    route(socket, http1, http2);
  };
  // A port `serve` bound before loading the emulator, or one bound here the same way.
  const listener = reserved ?? (await reserveListener(host, port));
  listener.adopt(onConnection);
  const net = listener.server;
  const boundPort = listener.port;
  return {
    port: boundPort,
    async close() {
      const closed = new Promise<void>((resolve) => net.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      http1.closeAllConnections();
      await closed;
    },
  };
}

/** Reads until the first bytes decide the protocol, puts them back, and hands the socket over. */
function route(
  socket: Socket,
  http1: ReturnType<typeof createHttp1Server>,
  http2: ReturnType<typeof createHttp2Server>,
): void {
  let head = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const compared = Math.min(head.length, PREFACE.length);
    const matches = head.subarray(0, compared).equals(PREFACE.subarray(0, compared));
    if (matches && head.length < PREFACE.length) return;
    socket.off("data", onData);
    socket.pause();
    socket.unshift(head);
    // The http2 session takes over the socket's handle and reads the unshifted bytes itself (Node's "bytes already in
    // buffer" path); resuming the JS stream would steal frames from it. The http1 parser reads them on resume.
    if (matches) http2.emit("connection", socket);
    else {
      http1.emit("connection", socket);
      socket.resume();
    }
  };
  socket.on("data", onData);
}
