import { once } from "node:events";
import {
  type ClientHttp2Stream,
  createServer,
  type Http2Server,
  type ServerHttp2Stream,
  type Settings,
} from "node:http2";
import { type AddressInfo, createServer as createTcpServer, type Socket, connect as tcpConnect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../util/logger.js";
import { createHttp2Sessions, type Http2Sessions } from "./http2-sessions.js";

/** An HTTP/2 server that answers every stream with 200 headers and keeps it open until the test ends it. */
async function holdingServer(settings: Settings = {}) {
  const streams: ServerHttp2Stream[] = [];
  const server: Http2Server = createServer({ settings });
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.respond({ ":status": 200 });
    streams.push(stream);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    streams,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.session?.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Opens a stream and waits for its response headers (proves it was not left queued behind the peer's limit). */
async function open(sessions: Http2Sessions): Promise<ClientHttp2Stream> {
  const stream = await sessions.request("POST", "/hold", {}, {});
  stream.on("error", () => {});
  await once(stream, "response");
  return stream;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A TCP relay in front of `origin` that holds every byte the server sends (its SETTINGS first) until `release()`:
 * what a peer's SETTINGS still on their way look like.
 */
async function withheldRelay(origin: string) {
  const target = new URL(origin);
  const held: Array<() => void> = [];
  let released = false;
  const sockets: Socket[] = [];
  const relay = createTcpServer((client) => {
    const upstream = tcpConnect({ host: target.hostname, port: Number(target.port) });
    sockets.push(client, upstream);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.pipe(upstream);
    const flow = () => upstream.pipe(client);
    if (released) flow();
    else held.push(flow);
  });
  relay.listen(0, "127.0.0.1");
  await once(relay, "listening");
  const { port } = relay.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    /** Connections the relay has accepted. */
    get connections() {
      return sockets.length / 2;
    },
    release() {
      released = true;
      for (const flow of held.splice(0)) flow();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        relay.close(() => resolve());
      }),
  };
}

describe("HTTP/2 session pool", () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  const start = async (settings: Settings, options: Parameters<typeof createHttp2Sessions>[2] = {}) => {
    const server = await holdingServer(settings);
    const sessions = createHttp2Sessions(server.origin, silentLogger, options);
    cleanup.push(server.close, () => sessions.close());
    return { server, sessions };
  };

  it("opens another session at the peer's SETTINGS_MAX_CONCURRENT_STREAMS instead of queueing streams", async () => {
    const { server, sessions } = await start({ maxConcurrentStreams: 3 });
    const streams = await Promise.all(Array.from({ length: 7 }, () => open(sessions)));
    expect(streams).toHaveLength(7);
    expect(server.streams).toHaveLength(7);
    expect(sessions.loads()).toEqual([3, 3, 1]);
    expect(new Set(streams.map((stream) => stream.session)).size).toBe(3);
  });

  it("opens another session at the configured cap when the peer allows more", async () => {
    const { sessions } = await start({}, { maxStreamsPerSession: 2 });
    await Promise.all(Array.from({ length: 5 }, () => open(sessions)));
    expect(sessions.loads()).toEqual([2, 2, 1]);
  });

  it("puts each new stream on the least-loaded session with room", async () => {
    const { sessions } = await start({ maxConcurrentStreams: 3 });
    const streams = await Promise.all(Array.from({ length: 7 }, () => open(sessions)));
    const first = streams[0]?.session;
    const onFirst = streams.filter((stream) => stream.session === first);
    for (const stream of onFirst.slice(0, 2)) {
      stream.close();
      await once(stream, "close");
    }
    expect(sessions.loads()).toEqual([1, 3, 1]);
    await open(sessions);
    expect(sessions.loads()).toEqual([2, 3, 1]);
    await open(sessions);
    expect(sessions.loads()).toEqual([2, 3, 2]);
  });

  it("opens the sessions a burst needs at once, without waiting for one session's SETTINGS before the next", async () => {
    const server = await holdingServer();
    const relay = await withheldRelay(server.origin);
    const sessions = createHttp2Sessions(relay.origin, silentLogger, { maxStreamsPerSession: 10 });
    cleanup.push(server.close, relay.close, () => sessions.close());
    const opened = Array.from({ length: 35 }, () => open(sessions));
    // No SETTINGS can arrive yet: each session takes its first stream at once and ten in all, so 35 need four.
    await until(() => relay.connections === 4, "four sessions to connect");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(relay.connections).toBe(4);
    relay.release();
    const streams = await Promise.all(opened);
    expect(new Set(streams.map((stream) => stream.session)).size).toBe(4);
    // How the waiting streams spread depends on which new session's SETTINGS came first; none is over its cap.
    const loads = sessions.loads();
    expect(loads).toHaveLength(4);
    expect(loads.reduce((a, b) => a + b, 0)).toBe(35);
    expect(Math.max(...loads)).toBeLessThanOrEqual(10);
    expect(server.streams).toHaveLength(35);
  });

  it("closes a session that stays idle", async () => {
    const { sessions } = await start({}, { idleTimeoutMs: 50 });
    const stream = await open(sessions);
    expect(sessions.loads()).toEqual([1]);
    stream.close();
    await until(() => sessions.loads().length === 0, "the idle session to close");
    await open(sessions);
    expect(sessions.loads()).toEqual([1]);
  });

  it("a session used again while its idle timer runs stays open, and closes once idle for the whole period", async () => {
    const { sessions } = await start({}, { idleTimeoutMs: 200 });
    const first = await open(sessions);
    const session = first.session;
    first.close();
    await until(() => sessions.loads()[0] === 0, "the first stream to close");
    // Busy again before the idle timer armed at that close fires: the timer, when it fires, finds it busy.
    const second = await open(sessions);
    expect(second.session).toBe(session);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessions.loads()).toEqual([1]);
    expect(second.session?.closed).toBe(false);
    second.close();
    await until(() => sessions.loads().length === 0, "the idle session to close");
  });

  it("a dropped session fails only the streams it carried", async () => {
    const { server, sessions } = await start({ maxConcurrentStreams: 2 });
    const streams = await Promise.all(Array.from({ length: 6 }, () => open(sessions)));
    const sessionOf = new Map(streams.map((stream) => [stream, stream.session]));
    expect(new Set(sessionOf.values()).size).toBe(3);
    const closed = new Set<ClientHttp2Stream>();
    for (const stream of streams) stream.once("close", () => closed.add(stream));
    // The server drops one connection (with its two streams).
    server.streams[0]?.session?.destroy();
    await until(() => closed.size === 2, "the dropped session's streams to close");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed.size).toBe(2);
    expect(new Set([...closed].map((stream) => sessionOf.get(stream))).size).toBe(1);
    expect(sessions.loads()).toEqual([2, 2]);
    // The survivors still work: the server answers on them.
    for (const stream of server.streams) if (!stream.destroyed) stream.end("done");
    const survivors = streams.filter((stream) => !closed.has(stream));
    expect(survivors).toHaveLength(4);
    await Promise.all(survivors.map((stream) => once(stream.resume(), "end")));
  });
});
