/**
 * connect-es transports for Cursor's unary calls: HTTP/2 over a small shared pool of sessions per origin (http2-sessions.ts),
 * and HTTP/1.1 over the injected `fetch` (BidiAppend and the model/usage RPCs). The HTTP/2 `Run` is framed by hand
 * on the same sessions (h2-run.ts).
 *
 * Each transport can report when an HTTP response arrived. That is how the automatic fallback tells "HTTP/2 failed
 * before any server output" (fall back to RunSSE + BidiAppend, §4.3) from "the server answered with an error" (never
 * fall back): the first rejects before a response, the second resolves one.
 */

import type { Http2Session } from "node:http2";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import type { UniversalClientFn, UniversalClientRequest } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { createNodeHttpClient } from "@connectrpc/connect-node";
import type { Logger } from "../../util/logger.js";
import { createHttp2Sessions, type Http2Sessions, type Http2SessionsOptions } from "./http2-sessions.js";

/** Called once an HTTP response (any status) has been received. */
export type ResponseObserver = () => void;

/** One HTTP/2 call's transport, and what happened to its connection. */
export interface Http2Call {
  transport: Transport;
  /**
   * After the call failed without a response: true when the HTTP/2 connection itself failed (it could not be opened,
   * or it died before the peer's SETTINGS arrived), which is what makes `auto` fall back to HTTP/1.1 for the call;
   * false for a stream-level failure on a working connection (RST_STREAM), which is the call's own error.
   */
  connectionFailed(): boolean;
}

/** Creates and owns the transports of one CursorApi. */
export interface TransportPool {
  /** A Connect transport over HTTP/2 to `baseUrl` for one (unary) call, on the pool's sessions for that origin. */
  http2(baseUrl: string, onResponse?: ResponseObserver): Http2Call;
  /** The pool's HTTP/2 sessions for `baseUrl`'s origin, for calls framed by hand (the HTTP/2 `Run`, h2-run.ts). */
  http2Sessions(baseUrl: string): Http2Sessions;
  /**
   * A connection of its own to `baseUrl`'s origin, shared with nothing (a retry after a dropped connection: whatever
   * happens to other turns' connections cannot fail it again). The caller closes it when its call is over.
   */
  privateHttp2Sessions(baseUrl: string): Http2Sessions;
  /** A Connect transport over HTTP/1.1 via `fetch` (unary only). */
  http1(baseUrl: string, onResponse?: ResponseObserver): Transport;
  /** Open streams of each shared HTTP/2 session, by origin (tests, diagnostics). */
  loads(): Record<string, number[]>;
  /** Closes every HTTP/2 session (open streams are aborted). */
  close(): void;
}

/** Options of {@link createTransportPool}. */
export interface TransportPoolOptions {
  fetch: typeof fetch;
  maxMessageBytes: number;
  logger: Logger;
  /** Limits of each origin's sessions (streams per connection, idle time). */
  sessions?: Http2SessionsOptions;
}

function observe(client: UniversalClientFn, onResponse: ResponseObserver | undefined): UniversalClientFn {
  if (onResponse === undefined) return client;
  return async (request) => {
    const response = await client(request);
    onResponse();
    return response;
  };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Uint8Array[] = [];
  let length = 0;
  for await (const part of body) {
    parts.push(part);
    length += part.length;
  }
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

async function* bodyOf(response: Response): AsyncIterable<Uint8Array> {
  if (response.body === null) return;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * `fetch` rejects with a bare TypeError for every network failure (refused, reset, DNS, blocked port…), often with no
 * Node code below it. The call site knows it was the network, so it says so with a code instead of leaving the
 * mapping to guess from text: Unavailable, with the original error as cause. Aborts pass through unchanged.
 */
export async function fetchOrUnavailable(
  fetchFn: typeof fetch,
  input: string | URL,
  init: RequestInit,
): Promise<Response> {
  try {
    return await fetchFn(input, init);
  } catch (error) {
    if (init.signal?.aborted === true) throw error;
    throw new ConnectError("Could not reach the Cursor server.", Code.Unavailable, undefined, undefined, error);
  }
}

/**
 * A UniversalClientFn over `fetch` for unary calls: the request body is buffered first, because Node's fetch needs
 * `duplex: "half"` for streamed bodies and unary Connect bodies are small anyway.
 */
export function createUnaryFetchClient(fetchFn: typeof fetch): UniversalClientFn {
  return async (request: UniversalClientRequest) => {
    const init: RequestInit = { method: request.method, headers: request.header };
    if (request.body !== undefined) init.body = await readAll(request.body);
    if (request.signal !== undefined) init.signal = request.signal;
    const response = await fetchOrUnavailable(fetchFn, request.url, init);
    // fetch asks for gzip itself and hands over the body already decoded: drop the encoding and the (compressed)
    // length, or connect-es (which accepts no compression) rejects any response large enough to be compressed.
    const header = new Headers(response.headers);
    if (header.has("content-encoding")) {
      header.delete("content-encoding");
      header.delete("content-length");
    }
    return { status: response.status, header, body: bodyOf(response), trailer: new Headers() };
  };
}

/** Creates a {@link TransportPool}. */
export function createTransportPool(options: TransportPoolOptions): TransportPool {
  const sessions = new Map<string, Http2Sessions>();
  // connect-node asks for a session with the full URL of every call; the few distinct URLs (one per RPC) map to
  // their origin's manager without parsing a URL per call.
  const byUrl = new Map<string, Http2Sessions>();
  const privates = new Set<Http2Sessions>();
  const sessionFor = (url: string): Http2Sessions => {
    const known = byUrl.get(url);
    if (known !== undefined) return known;
    const origin = new URL(url).origin;
    let manager = sessions.get(origin);
    if (manager === undefined) {
      manager = createHttp2Sessions(origin, options.logger, options.sessions);
      sessions.set(origin, manager);
    }
    byUrl.set(url, manager);
    return manager;
  };
  /**
   * An HTTP/2 client for one call whose session provider remembers the call's stream (or that no stream could be
   * opened), so the call can tell a connection failure from a stream failure afterwards.
   */
  const h2CallClient = (): { client: UniversalClientFn; connectionFailed: () => boolean } => {
    // The session is captured when the stream opens: a destroyed stream no longer points to it.
    let session: Http2Session | undefined;
    let manager: Http2Sessions | undefined;
    let noStream = false;
    const client = createNodeHttpClient({
      httpVersion: "2",
      sessionProvider: (url) => {
        const sessions = sessionFor(url);
        manager = sessions;
        return {
          authority: sessions.authority,
          request: (method, path, headers, requestOptions) =>
            sessions.request(method, path, headers, requestOptions).then(
              (opened) => {
                session = opened.session;
                return opened;
              },
              (error: unknown) => {
                noStream = true;
                throw error;
              },
            ),
          notifyResponseByteRead: (opened) => sessions.notifyResponseByteRead(opened),
        };
      },
    });
    const connectionFailed = () =>
      noStream || (session !== undefined && manager !== undefined && !manager.handshaken(session));
    return { client, connectionFailed };
  };
  const h1Client = createUnaryFetchClient(options.fetch);
  const build = (baseUrl: string, httpClient: UniversalClientFn): Transport =>
    createTransport({
      httpClient,
      baseUrl,
      useBinaryFormat: true,
      interceptors: [],
      acceptCompression: [],
      sendCompression: null,
      compressMinBytes: 1024,
      readMaxBytes: options.maxMessageBytes,
      writeMaxBytes: options.maxMessageBytes,
    });
  return {
    http2: (baseUrl, onResponse) => {
      const { client, connectionFailed } = h2CallClient();
      return { transport: build(baseUrl, observe(client, onResponse)), connectionFailed };
    },
    http2Sessions: sessionFor,
    privateHttp2Sessions: (url) => {
      const manager = createHttp2Sessions(new URL(url).origin, options.logger, options.sessions);
      privates.add(manager);
      return {
        ...manager,
        close: () => {
          privates.delete(manager);
          manager.close();
        },
      };
    },
    http1: (baseUrl, onResponse) => build(baseUrl, observe(h1Client, onResponse)),
    loads: () => Object.fromEntries([...sessions].map(([origin, manager]) => [origin, manager.loads()])),
    close() {
      for (const manager of privates) manager.close();
      privates.clear();
      for (const manager of sessions.values()) manager.close();
      sessions.clear();
      byUrl.clear();
    },
  };
}
