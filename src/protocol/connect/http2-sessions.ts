/**
 * A small pool of HTTP/2 sessions per origin, shared by connect-node's HTTP/2 client (the unary calls, through the
 * `NodeHttp2ClientSessionManager` contract) and the hand-framed `Run` (h2-run.ts). docs/protocol.md §4.2 describes
 * the behaviour on the wire:
 *
 * - A session carries at most `maxStreamsPerSession` streams, or fewer when the peer's
 *   SETTINGS_MAX_CONCURRENT_STREAMS says so (read at every choice: the peer may change it). A stream over the peer's
 *   limit would wait inside nghttp2 until another stream closes, which for a parked turn may be never; so a new
 *   session carries one stream until its SETTINGS arrive, and another session opens when every session is full.
 * - Streams that wait for a new session's SETTINGS count against that session's cap: once as many wait as it may
 *   carry, the next stream opens yet another session. A burst of a thousand streams thus opens its sessions in one
 *   round trip, all handshakes at once, instead of one handshake after another (each waiting for a turn of an event
 *   loop that the burst itself keeps busy).
 * - Each new stream goes to the least-loaded session that has room.
 * - A session with no open stream for `idleTimeoutMs` closes; one that received GOAWAY or failed takes no new stream.
 * - A dropped session fails only the streams it carried.
 *
 * connect-node's own Http2SessionManager drops its "error" listener when a session fails, and Node then emits the
 * session-level error (e.g. ERR_HTTP2_ERROR when the peer answers the preface in HTTP/1.1, the very case that makes us
 * fall back to RunSSE) with nobody listening, which crashes the process. Here every session keeps an error listener
 * for its whole life: the stream that hit the failure reports it, the session is retired, the next request uses
 * another. Idle sessions are unref'd so they never keep the process alive; `close()` destroys them.
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

/** Default of {@link Http2SessionsOptions.maxStreamsPerSession}. */
export const DEFAULT_STREAMS_PER_SESSION = 100;
/** Default of {@link Http2SessionsOptions.idleTimeoutMs}. */
export const DEFAULT_SESSION_IDLE_MS = 60_000;

/** Options of {@link createHttp2Sessions}. */
export interface Http2SessionsOptions {
  /** Most streams open at once on one session; the peer's SETTINGS_MAX_CONCURRENT_STREAMS may lower it. @default 100 */
  maxStreamsPerSession?: number;
  /** A session with no open stream for this long is closed. @default 60000 */
  idleTimeoutMs?: number;
  /** A new session whose peer has not sent its SETTINGS after this long fails. @default 30000 */
  settingsTimeoutMs?: number;
}

/** A session manager for one origin. */
export interface Http2Sessions extends NodeHttp2ClientSessionManager {
  /**
   * True once the peer's SETTINGS arrived on `session`: HTTP/2 itself works on this connection, so a failure of one
   * of its streams is that stream's problem, not a sign that HTTP/2 is unavailable.
   */
  handshaken(session: Http2Session): boolean;
  /** Open streams of each session not yet closed, oldest session first (tests, diagnostics). */
  loads(): number[];
  /** Destroys every session (open streams fail). */
  close(): void;
}

/** One session of the pool. */
interface Entry {
  readonly session: ClientHttp2Session;
  /** Resolves once the peer's SETTINGS arrived; rejects when the session fails first. */
  readonly ready: Promise<void>;
  settled: boolean;
  /** No new stream goes here (GOAWAY, error, closing). */
  retired: boolean;
  /** Streams open or being opened. */
  streams: number;
  /** Streams waiting for this session's SETTINGS before they choose a session (a new session only). */
  waiting: number;
  /** Armed once per idle period, not per stream (see {@link release}); undefined when none is pending. */
  idleTimer: NodeJS.Timeout | undefined;
  /** `performance.now()` when its last stream closed: the idle timer counts from there. */
  idleSince: number;
}

/** Creates the session manager of `origin` (e.g. `https://api2.cursor.sh`). */
export function createHttp2Sessions(origin: string, logger: Logger, options: Http2SessionsOptions = {}): Http2Sessions {
  const cap = Math.max(1, options.maxStreamsPerSession ?? DEFAULT_STREAMS_PER_SESSION);
  const idleMs = options.idleTimeoutMs ?? DEFAULT_SESSION_IDLE_MS;
  const settingsMs = options.settingsTimeoutMs ?? 30_000;
  /** Live sessions, oldest first. */
  const entries: Entry[] = [];
  const handshakes = new WeakSet<Http2Session>();

  const usable = (entry: Entry) => !entry.retired && !entry.session.closed && !entry.session.destroyed;
  const capacity = (entry: Entry) => Math.min(cap, entry.session.remoteSettings?.maxConcurrentStreams ?? cap);
  const retire = (entry: Entry) => {
    entry.retired = true;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
  };
  const remove = (entry: Entry) => {
    retire(entry);
    const at = entries.indexOf(entry);
    if (at >= 0) entries.splice(at, 1);
  };

  const connectSession = (): Entry => {
    const session = connect(origin, { maxSessionMemory: 1024 });
    session.unref();
    let entry: Entry | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        session.destroy(
          Object.assign(new Error(`The HTTP/2 peer sent no SETTINGS within ${settingsMs} ms.`), {
            code: "ERR_HTTP2_SETTINGS_TIMEOUT",
          }),
        );
      }, settingsMs);
      timer.unref();
      session.once("remoteSettings", () => {
        clearTimeout(timer);
        handshakes.add(session);
        if (entry !== undefined) entry.settled = true;
        resolve();
      });
      session.on("error", (error: Error & { code?: string }) => {
        clearTimeout(timer);
        logger.debug("HTTP/2 session error", { origin, code: error.code });
        if (entry !== undefined) retire(entry);
        reject(error);
      });
      session.once("close", () => {
        clearTimeout(timer);
        if (entry !== undefined) remove(entry);
        reject(Object.assign(new Error("The HTTP/2 session closed."), { code: "ERR_HTTP2_SESSION_CLOSED" }));
      });
    });
    // The rejection reaches the requests that await it; a session nobody awaits must not raise an unhandled rejection.
    ready.catch(() => {});
    entry = {
      session,
      ready,
      settled: false,
      retired: false,
      streams: 0,
      waiting: 0,
      idleTimer: undefined,
      idleSince: 0,
    };
    session.on("goaway", () => {
      if (entry !== undefined) retire(entry);
    });
    entries.push(entry);
    logger.debug("HTTP/2 session opened", { origin, sessions: entries.length });
    return entry;
  };

  /** The least-loaded ready session with room, or undefined. */
  const leastLoaded = (): Entry | undefined => {
    let best: Entry | undefined;
    for (const entry of entries) {
      if (!entry.settled || !usable(entry) || entry.streams >= capacity(entry)) continue;
      if (best === undefined || entry.streams < best.streams) best = entry;
    }
    return best;
  };

  /**
   * Counts one more stream on `entry` (keeps the process alive while any stream is open). A pending idle timer is
   * left to run: it finds the session busy and stands down (see {@link closeIfIdle}). Clearing it here cost every
   * Run a `clearTimeout` (about 6 µs, before the Run's request leaves) and its release a new timer.
   */
  const reserve = (entry: Entry) => {
    if (entry.streams === 0) entry.session.ref();
    entry.streams++;
  };

  /** The idle timer fired: closes a session idle for `idleMs` since its last stream, else waits for the rest. */
  const closeIfIdle = (entry: Entry) => {
    entry.idleTimer = undefined;
    // Busy again: the release of its last stream arms the next timer.
    if (entry.streams > 0 || entry.retired || entry.session.destroyed) return;
    const left = idleMs - (performance.now() - entry.idleSince);
    if (left > 0) {
      armIdle(entry, left);
      return;
    }
    retire(entry);
    logger.debug("HTTP/2 session idle; closing it", { origin });
    entry.session.close();
  };

  const armIdle = (entry: Entry, ms: number) => {
    entry.idleTimer = setTimeout(closeIfIdle, ms, entry);
    entry.idleTimer.unref();
  };

  /**
   * One stream of `entry` is over; an idle session closes `idleMs` after its last stream did. One timer per idle
   * period: a release while one is pending only moves `idleSince`, and the timer waits for what is left when it fires.
   */
  const release = (entry: Entry) => {
    entry.streams = Math.max(0, entry.streams - 1);
    if (entry.streams > 0 || entry.session.destroyed) return;
    entry.session.unref();
    if (entry.retired) {
      if (!entry.session.closed) entry.session.close();
      return;
    }
    entry.idleSince = performance.now();
    if (entry.idleTimer === undefined) armIdle(entry, idleMs);
  };

  /** A session with a slot reserved for one stream: the least-loaded one with room, else a new one. */
  const acquire = async (): Promise<Entry> => {
    for (;;) {
      const best = leastLoaded();
      if (best !== undefined) {
        reserve(best);
        return best;
      }
      // A new session whose SETTINGS are still on their way, with fewer streams on it and waiting for it than the cap.
      const pending = entries.find((entry) => !entry.settled && usable(entry) && entry.streams + entry.waiting < cap);
      if (pending === undefined) {
        // The first stream of a new session goes out right behind its preface, without waiting a round trip for the
        // SETTINGS: any peer allows one stream. The others wait for them.
        const fresh = connectSession();
        reserve(fresh);
        return fresh;
      }
      pending.waiting++;
      try {
        await pending.ready;
      } finally {
        pending.waiting--;
      }
      if (pending.session.remoteSettings?.maxConcurrentStreams === 0) {
        remove(pending);
        pending.session.close();
        throw Object.assign(new Error("The HTTP/2 peer allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS = 0)."), {
          code: "ERR_HTTP2_OUT_OF_STREAMS",
        });
      }
    }
  };

  return {
    authority: origin,
    async request(
      method: string,
      path: string,
      headers: OutgoingHttpHeaders,
      requestOptions: Omit<ClientSessionRequestOptions, "signal">,
    ): Promise<ClientHttp2Stream> {
      // One retry: a session can start closing (GOAWAY) between the choice and the request.
      for (let attempt = 0; ; attempt++) {
        const entry = await acquire();
        let stream: ClientHttp2Stream;
        try {
          // Object.assign, not a spread: keys added to a spread copy cost a fresh hidden class (every stream).
          const all: OutgoingHttpHeaders = Object.assign({}, headers);
          all[":method"] = method;
          all[":path"] = path;
          stream = entry.session.request(all, requestOptions);
        } catch (error) {
          retire(entry);
          release(entry);
          if (attempt > 0 || (!entry.session.closed && !entry.session.destroyed)) throw error;
          continue;
        }
        // \`on\`, not \`once\`: a stream closes once, and a once-wrapper (a bound function and its state) is kept with
        // every open stream, for minutes with a parked turn's.
        stream.on("close", () => release(entry));
        return stream;
      }
    },
    notifyResponseByteRead() {},
    handshaken: (session) => handshakes.has(session),
    loads: () => entries.map((entry) => entry.streams),
    close() {
      for (const entry of [...entries]) {
        remove(entry);
        entry.session.destroy();
      }
    },
  };
}
