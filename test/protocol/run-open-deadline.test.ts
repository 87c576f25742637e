/**
 * What bounds a Run's open (OpenRunOptions `signal` and `deadlineMs`, src/protocol/cursor/run-opening.ts): the
 * deadline covers the whole open (the token, HTTP/2, HTTP/1.1 and `auto`'s fallback between them) and fails it as a
 * stall; the caller's abort cancels it at any point; neither is a connection failure `auto` falls back from; and once
 * the open settles, the caller's signal keeps no listener and the deadline no timer that could still end the Run.
 */
import { getEventListeners } from "node:events";
import { constants, createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { openRunWithDeadline } from "../../src/backend/turn-setup.js";
import {
  AgentClientMessageSchema,
  type AgentServerMessage,
  AgentServerMessageSchema,
} from "../../src/gen/agent/v1/agent_pb.js";
import { encodeEnvelope } from "../../src/protocol/connect/envelope.js";
import { type CursorApi, type CursorApiOptions, createCursorApi } from "../../src/protocol/cursor/cursor-api.js";
import { ProxyError } from "../../src/util/errors.js";

const first = create(AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
const textFrame = (text: string) =>
  encodeEnvelope(
    0,
    toBinary(
      AgentServerMessageSchema,
      create(AgentServerMessageSchema, {
        message: { case: "interactionUpdate", value: { message: { case: "textDelta", value: { text } } } },
      }),
    ),
  );
const connectResponse = { ":status": 200, "content-type": "application/connect+proto" };
const stalled = (ms: number) => ({
  code: "timeout",
  detail: "stalled",
  message: `Cursor did not answer the Run within ${ms} ms.`,
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function apiFor(options: Partial<CursorApiOptions> & Pick<CursorApiOptions, "agentUrl">): CursorApi {
  const api = createCursorApi({
    apiUrl: options.agentUrl,
    getAccessToken: async () => "token-1",
    clientVersion: "cli-2026.01.17-d239e66",
    ...options,
  });
  cleanups.push(() => api.close());
  return api;
}

/** An h2c server calling `handler` for each stream; the streams it saw, and their closing. */
async function h2Server(
  handler: (stream: ServerHttp2Stream) => void = () => {},
): Promise<{ url: string; streams: ServerHttp2Stream[]; closed: Promise<void>[] }> {
  const server: Http2Server = createServer();
  const streams: ServerHttp2Stream[] = [];
  const closed: Promise<void>[] = [];
  server.on("stream", (stream) => {
    streams.push(stream);
    closed.push(new Promise((resolve) => stream.on("close", resolve)));
    stream.on("error", () => {});
    handler(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const stream of streams) stream.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, streams, closed };
}

/** Answers the Run with one text delta and holds it open until the client ends it. */
function answerAndHold(stream: ServerHttp2Stream): void {
  stream.respond(connectResponse);
  stream.write(textFrame("hello"));
}

/** A TCP server that accepts connections and never says anything: an HTTP/2 connection that never opens. */
async function silentServer(): Promise<string> {
  const sockets: Socket[] = [];
  const server: Server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface FakeHttp1 {
  fetch: typeof fetch;
  /** The signals RunSSE was fetched with. */
  runSse: AbortSignal[];
}

/** HTTP/1.1 RunSSE that never answers (`answer` false) or answers a held-open body with one text delta. */
function fakeHttp1(answer: boolean): FakeHttp1 {
  const fake: FakeHttp1 = { runSse: [], fetch: undefined as unknown as typeof fetch };
  fake.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const signal = init?.signal as AbortSignal;
    if (String(input).endsWith("/BidiAppend")) {
      return new Response(new Uint8Array(), { status: 200, headers: { "content-type": "application/proto" } });
    }
    fake.runSse.push(signal);
    if (!answer) {
      return new Promise<Response>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(textFrame("hello"));
        signal.addEventListener("abort", () => controller.error(signal.reason));
      },
    });
    return new Response(body, { status: 200, headers: { "content-type": "application/connect+proto" } });
  }) as typeof fetch;
  return fake;
}

/** The first server message's text delta, read without leaving the stream (leaving it early aborts the Run). */
async function firstText(messages: AsyncIterable<AgentServerMessage>): Promise<string | undefined> {
  const { value } = await messages[Symbol.asyncIterator]().next();
  const update = (value as AgentServerMessage | undefined)?.message;
  return update?.case === "interactionUpdate" && update.value.message.case === "textDelta"
    ? update.value.message.value.text
    : undefined;
}

const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the open's deadline", () => {
  it("over HTTP/2: a Run Cursor never answers fails as a stall, and its stream is canceled", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    await expect(api.openRun(first, { deadlineMs: 150 })).rejects.toMatchObject(stalled(150));
    expect(server.streams).toHaveLength(1);
    await server.closed[0];
  });

  it("over HTTP/1.1: a RunSSE Cursor never answers fails as a stall, and its request is aborted", async () => {
    const fake = fakeHttp1(false);
    const api = apiFor({ agentUrl: "http://cursor.test", transport: "http1", fetch: fake.fetch });
    await expect(api.openRun(first, { deadlineMs: 150 })).rejects.toMatchObject(stalled(150));
    expect(fake.runSse).toHaveLength(1);
    expect(fake.runSse[0]?.aborted).toBe(true);
  });

  it("covers the token: a token that never comes fails the open as a stall, with no request sent", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2", getAccessToken: () => new Promise(() => {}) });
    await expect(api.openRun(first, { deadlineMs: 100 })).rejects.toMatchObject(stalled(100));
    expect(server.streams).toHaveLength(0);
  });

  it("auto: reached while HTTP/2 connects, it is a stall, not a connection failure to fall back from", async () => {
    const fake = fakeHttp1(true);
    const api = apiFor({ agentUrl: await silentServer(), transport: "auto", fetch: fake.fetch });
    await expect(api.openRun(first, { deadlineMs: 150 })).rejects.toMatchObject(stalled(150));
    expect(fake.runSse).toHaveLength(0);
  });

  it("auto: bounds the HTTP/1.1 fallback too", async () => {
    const fake = fakeHttp1(false);
    const api = apiFor({ agentUrl: `http://127.0.0.1:${await closedPort()}`, transport: "auto", fetch: fake.fetch });
    await expect(api.openRun(first, { deadlineMs: 1000 })).rejects.toMatchObject(stalled(1000));
    expect(fake.runSse).toHaveLength(1);
    expect(fake.runSse[0]?.aborted).toBe(true);
  });

  it("passes openRunWithDeadline unchanged", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    const caller = new AbortController();
    await expect(openRunWithDeadline(api, first, caller.signal, 120)).rejects.toMatchObject(stalled(120));
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
  });
});

describe("the caller's abort while the Run opens", () => {
  it("over HTTP/2 cancels the open and the Run's stream, and leaves no listener", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    await expect.poll(() => server.streams.length).toBe(1);
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    await server.closed[0];
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
  });

  it("in the event-loop turn the open starts in (before it watches the signal), still cancels it", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
  });

  it("in the turn the open starts in, answered before it watches the signal, still cancels it", async () => {
    // An in-process RunSSE answers within the open's first event-loop turn: the open settles before its watchers
    // are armed, and must still see the abort rather than return an open Run.
    const fake = fakeHttp1(true);
    const api = apiFor({ agentUrl: "http://cursor.test", transport: "http1", fetch: fake.fetch });
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    expect(fake.runSse[0]?.aborted).toBe(true);
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
  });

  it("in the turn the open starts in, while the token comes, sends no Run request", async () => {
    const server = await h2Server(answerAndHold);
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    // A connected session, so that a request would be written at once.
    (await api.openRun(first)).abort();
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    // A Run opened after it on the same connection: had the canceled one been sent, the server would have seen it first.
    (await api.openRun(first)).abort();
    expect(server.streams).toHaveLength(2);
  });

  it("over HTTP/1.1 cancels the open and aborts its request", async () => {
    const fake = fakeHttp1(false);
    const api = apiFor({ agentUrl: "http://cursor.test", transport: "http1", fetch: fake.fetch });
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    await expect.poll(() => fake.runSse.length).toBe(1);
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    expect(fake.runSse[0]?.aborted).toBe(true);
  });

  it("while the token is awaited, stops waiting for it", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2", getAccessToken: () => new Promise(() => {}) });
    const caller = new AbortController();
    const opening = api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 });
    await later(20);
    caller.abort();
    await expect(opening).rejects.toMatchObject({ code: "canceled" });
    expect(server.streams).toHaveLength(0);
  });

  it("given before the open, sends nothing", async () => {
    const server = await h2Server();
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    await expect(api.openRun(first, { signal: AbortSignal.abort(), deadlineMs: 60_000 })).rejects.toMatchObject({
      code: "canceled",
    });
    expect(server.streams).toHaveLength(0);
  });
});

describe("an open Run", () => {
  it("over HTTP/2 keeps no listener on the caller's signal, and outlives the deadline and the signal", async () => {
    const server = await h2Server(answerAndHold);
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    const caller = new AbortController();
    const run = await api.openRun(first, { signal: caller.signal, deadlineMs: 50 });
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
    await later(100);
    caller.abort();
    expect(await firstText(run.messages())).toBe("hello");
    expect(server.streams[0]?.closed).toBe(false);
    run.abort();
    await server.closed[0];
  });

  it("over HTTP/1.1 keeps no listener on the caller's signal, and outlives the deadline and the signal", async () => {
    const fake = fakeHttp1(true);
    const api = apiFor({ agentUrl: "http://cursor.test", transport: "http1", fetch: fake.fetch });
    const caller = new AbortController();
    const run = await api.openRun(first, { signal: caller.signal, deadlineMs: 50 });
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
    await later(100);
    caller.abort();
    expect(await firstText(run.messages())).toBe("hello");
    expect(fake.runSse[0]?.aborted).toBe(false);
    run.abort();
    expect(fake.runSse[0]?.aborted).toBe(true);
  });

  it("a failed open leaves no listener either", async () => {
    // Reset before any answer (RST_STREAM INTERNAL_ERROR): the open itself fails.
    const server = await h2Server((stream) => stream.close(constants.NGHTTP2_INTERNAL_ERROR));
    const api = apiFor({ agentUrl: server.url, transport: "http2" });
    const caller = new AbortController();
    await expect(api.openRun(first, { signal: caller.signal, deadlineMs: 60_000 })).rejects.toBeInstanceOf(ProxyError);
    expect(getEventListeners(caller.signal, "abort")).toEqual([]);
  });
});
