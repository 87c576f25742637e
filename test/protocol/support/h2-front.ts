/**
 * A fault-injecting front for transport tests, on one port like the emulator: each connection is sniffed for the
 * HTTP/2 client preface. HTTP/1.1 connections are piped to the upstream untouched. HTTP/2 connections are either
 * refused (the socket is destroyed as soon as the preface arrives: "HTTP/2 does not work on this path") or served by a
 * local h2c server that forwards every stream to the upstream over HTTP/2, except that it can answer streams with
 * RST_STREAM (REFUSED_STREAM) before any response: one bad stream on a healthy connection.
 */
import {
  type ClientHttp2Session,
  connect as connectHttp2,
  constants,
  createServer,
  type ServerHttp2Stream,
} from "node:http2";
import { type AddressInfo, connect as connectTcp, createServer as createNetServer, type Socket } from "node:net";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

/** A running front. The counters and fault budgets are plain fields: tests read and set them between calls. */
export interface H2Front {
  url: string;
  /** HTTP/2 connections refused so far, and how many more to refuse. */
  refusedConnections: number;
  refuseConnections: number;
  /** Streams reset so far, and how many more to reset. */
  resetStreamCount: number;
  resetStreams: number;
  /** HTTP/1.1 connections to destroy before forwarding any (the whole server unreachable, with refuseConnections). */
  refuseHttp1Connections: number;
  /** HTTP/2 connections and HTTP/1.1 connections seen. */
  h2Connections: number;
  h1Connections: number;
  close(): Promise<void>;
}

/** Starts a front on 127.0.0.1:0 for `upstream` (an emulator URL: h2c and HTTP/1.1 on one port). */
export async function startH2Front(upstream: string): Promise<H2Front> {
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  let session: ClientHttp2Session | undefined;
  const upstreamSession = () => {
    if (session === undefined || session.destroyed || session.closed) session = connectHttp2(upstream);
    return session;
  };

  const front: H2Front = {
    url: "",
    refusedConnections: 0,
    refuseConnections: 0,
    resetStreamCount: 0,
    resetStreams: 0,
    refuseHttp1Connections: 0,
    h2Connections: 0,
    h1Connections: 0,
    close: async () => {},
  };

  const h2 = createServer();
  h2.on("stream", (stream: ServerHttp2Stream, headers) => {
    if (front.resetStreams > 0) {
      front.resetStreams--;
      front.resetStreamCount++;
      stream.on("error", () => {});
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    const out: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(headers)) {
      if (value !== undefined && key !== ":authority" && key !== ":scheme") out[key] = value;
    }
    const up = upstreamSession().request(out);
    up.on("response", (responseHeaders) => {
      const answer: Record<string, string | string[] | number> = {};
      for (const [key, value] of Object.entries(responseHeaders)) {
        if (value !== undefined && (key === ":status" || !key.startsWith(":"))) answer[key] = value;
      }
      stream.respond(answer);
      up.pipe(stream);
    });
    up.on("error", () => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
    stream.on("error", () => up.close(constants.NGHTTP2_CANCEL));
    stream.on("close", () => up.close(constants.NGHTTP2_CANCEL));
    stream.pipe(up);
  });

  const route = (socket: Socket) => {
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const compared = Math.min(head.length, PREFACE.length);
      const matches = head.subarray(0, compared).equals(PREFACE.subarray(0, compared));
      if (matches && head.length < PREFACE.length) return;
      socket.off("data", onData);
      socket.pause();
      if (!matches) {
        front.h1Connections++;
        if (front.refuseHttp1Connections > 0) {
          front.refuseHttp1Connections--;
          socket.destroy();
          return;
        }
        const pipe = connectTcp(Number(target.port), target.hostname);
        sockets.add(pipe);
        pipe.on("close", () => sockets.delete(pipe));
        pipe.on("error", () => socket.destroy());
        socket.on("error", () => pipe.destroy());
        pipe.write(head);
        socket.pipe(pipe).pipe(socket);
        socket.resume();
        return;
      }
      front.h2Connections++;
      if (front.refuseConnections > 0) {
        front.refuseConnections--;
        front.refusedConnections++;
        socket.destroy();
        return;
      }
      socket.unshift(head);
      h2.emit("connection", socket);
    };
    socket.on("data", onData);
  };

  const net = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    route(socket);
  });
  await new Promise<void>((resolve) => net.listen(0, "127.0.0.1", resolve));
  front.url = `http://127.0.0.1:${(net.address() as AddressInfo).port}`;
  front.close = async () => {
    const closed = new Promise<void>((resolve) => net.close(() => resolve()));
    session?.destroy();
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return front;
}
