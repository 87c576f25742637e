/**
 * Child-process entry of the benchmark's relays (bench/hop-floor.ts), by `BENCH_RELAY_KIND`:
 * - `tcp`: each connection piped to a new connection to the emulator, bytes only. Nothing in between can do less (one
 *   more process between client and Cursor, a read and a write per chunk each way), so what it adds to the direct
 *   client's figures is the floor of what any bridge adds on this machine.
 * - `h2`: an HTTP/2 server that passes every stream on to the emulator over one HTTP/2 session and the answer back,
 *   parsing no message: the least a bridge that ends HTTP on both sides does.
 * Talks to the parent over the fork IPC channel (bench/child-ipc.ts).
 */
import {
  connect,
  constants,
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from "node:http2";
import { type AddressInfo, createServer as createNetServer, connect as netConnect } from "node:net";
import { serveParent } from "./child-ipc.js";

/** First message to the parent. */
export interface RelayReady {
  type: "ready";
  url: string;
  pid: number;
}

const { HTTP2_HEADER_STATUS, NGHTTP2_CANCEL } = constants;

/** The request's headers without the pseudo-headers the new stream sets itself (`:authority`, `:scheme`). */
function forwardedRequestHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === ":authority" || name === ":scheme") continue;
    out[name] = value;
  }
  return out;
}

/** The HTTP/2 relay's stream handler. */
function h2Relay(upstreamUrl: string) {
  const session = connect(upstreamUrl);
  session.on("error", () => {});
  return (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const upstream = session.request(forwardedRequestHeaders(headers));
    upstream.on("response", (response) => {
      const status = Number(response[HTTP2_HEADER_STATUS] ?? 502);
      const answer: OutgoingHttpHeaders = { ...response, [HTTP2_HEADER_STATUS]: status };
      if (!stream.destroyed) stream.respond(answer);
    });
    stream.pipe(upstream);
    upstream.pipe(stream);
    const cancel = (other: { destroyed: boolean; close(code: number): void }) => () => {
      if (!other.destroyed) other.close(NGHTTP2_CANCEL);
    };
    stream.on("error", cancel(upstream));
    upstream.on("error", cancel(stream));
    stream.on("aborted", cancel(upstream));
  };
}

/** A TCP relay: each connection piped to a new connection to the upstream's port. */
function tcpRelay(upstreamUrl: string) {
  const { hostname, port } = new URL(upstreamUrl);
  return createNetServer({ noDelay: true }, (socket) => {
    const upstream = netConnect({ host: hostname, port: Number(port), noDelay: true });
    socket.pipe(upstream);
    upstream.pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
    socket.on("close", () => upstream.destroy());
    upstream.on("close", () => socket.destroy());
  });
}

async function main(): Promise<void> {
  const upstreamUrl = process.env.BENCH_RELAY_UPSTREAM;
  if (upstreamUrl === undefined) throw new Error("BENCH_RELAY_UPSTREAM is not set");
  const server =
    process.env.BENCH_RELAY_KIND === "tcp" ? tcpRelay(upstreamUrl) : createServer().on("stream", h2Relay(upstreamUrl));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  // Closing ends the process: the open sessions need no goodbye.
  serveParent({ cpu: () => process.cpuUsage() }, async () => {
    server.close();
  });
  const ready: RelayReady = { type: "ready", url: `http://127.0.0.1:${port}`, pid: process.pid };
  process.send?.(ready);
}

void main();
