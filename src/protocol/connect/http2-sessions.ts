/**
 * One HTTP/2 session per origin, shared by connect-node's HTTP/2 client (the unary calls, through the
 * `NodeHttp2ClientSessionManager` contract) and the hand-framed `Run` (h2-run.ts).
 *
 * connect-node's own Http2SessionManager drops its "error" listener when a session fails, and Node then emits the
 * session-level error (e.g. ERR_HTTP2_ERROR when the peer answers the preface in HTTP/1.1, the very case that makes us
 * fall back to RunSSE) with nobody listening, which crashes the process. Here every session keeps an error listener
 * for its whole life: the stream that hit the failure reports it, the session is dropped, the next request reconnects.
 * Idle sessions are unref'd so they never keep the process alive; `close()` destroys them.
 */
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type ClientSessionRequestOptions,
  connect,
  type Http2Session,
  type OutgoingHttpHeaders,
} from "node:http2";
import type { NodeHttpClientOptions } from "@connectrpc/connect-node";
import type { Logger } from "../../util/logger.js";

/** connect-node's session-manager contract (its interface type is not exported by name). */
type NodeHttp2ClientSessionManager = ReturnType<
  NonNullable<Extract<NodeHttpClientOptions, { httpVersion: "2" }>["sessionProvider"]>
>;

/** A session manager for one origin. */
export interface Http2Sessions extends NodeHttp2ClientSessionManager {
  /**
   * True once the peer's SETTINGS arrived on `session`: HTTP/2 itself works on this connection, so a failure of one
   * of its streams is that stream's problem, not a sign that HTTP/2 is unavailable.
   */
  handshaken(session: Http2Session): boolean;
  /** Destroys the current session (open streams fail). */
  close(): void;
}

/** Creates the session manager of `origin` (e.g. `https://api2.cursor.sh`). */
export function createHttp2Sessions(origin: string, logger: Logger): Http2Sessions {
  let current: { session: ClientHttp2Session; ready: Promise<ClientHttp2Session> } | undefined;
  /** Every session not yet closed (a replaced session may still carry streams), with its open stream count. */
  const live = new Map<ClientHttp2Session, number>();
  const settled = new WeakSet<Http2Session>();

  const usable = (session: ClientHttp2Session) => !session.closed && !session.destroyed;
  const forget = (session: ClientHttp2Session) => {
    if (current?.session === session) current = undefined;
  };

  const connectSession = () => {
    const session = connect(origin, { maxSessionMemory: 1024 });
    session.unref();
    live.set(session, 0);
    session.once("remoteSettings", () => settled.add(session));
    const ready = new Promise<ClientHttp2Session>((resolve, reject) => {
      session.once("connect", () => resolve(session));
      session.on("error", (error: Error & { code?: string }) => {
        logger.debug("HTTP/2 session error", { origin, code: error.code });
        reject(error);
        forget(session);
      });
    });
    // The rejection reaches the request that awaits it; a session nobody awaits must not raise an unhandled rejection.
    ready.catch(() => {});
    session.once("close", () => {
      forget(session);
      live.delete(session);
    });
    session.on("goaway", () => forget(session));
    current = { session, ready };
    return ready;
  };

  const sessionForRequest = (): Promise<ClientHttp2Session> =>
    current !== undefined && usable(current.session) ? current.ready : connectSession();

  const track = (session: ClientHttp2Session, stream: ClientHttp2Stream) => {
    // Keep the process alive while a stream is open, not while the session idles.
    const count = live.get(session) ?? 0;
    live.set(session, count + 1);
    if (count === 0) session.ref();
    stream.once("close", () => {
      const left = (live.get(session) ?? 1) - 1;
      if (live.has(session)) live.set(session, left);
      if (left === 0 && usable(session)) session.unref();
    });
  };

  return {
    authority: origin,
    async request(
      method: string,
      path: string,
      headers: OutgoingHttpHeaders,
      options: Omit<ClientSessionRequestOptions, "signal">,
    ): Promise<ClientHttp2Stream> {
      // One retry: a session can start closing (GOAWAY) between the lookup and the request.
      for (let attempt = 0; ; attempt++) {
        const session = await sessionForRequest();
        try {
          const stream = session.request({ ...headers, ":method": method, ":path": path }, options);
          track(session, stream);
          return stream;
        } catch (error) {
          forget(session);
          if (attempt > 0 || usable(session)) throw error;
        }
      }
    },
    notifyResponseByteRead() {},
    handshaken: (session) => settled.has(session),
    close() {
      for (const session of live.keys()) session.destroy();
      live.clear();
      current = undefined;
    },
  };
}
