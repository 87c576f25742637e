/**
 * One socket write per event-loop turn for streamed responses. Node writes each `res.write()` of a chunked response
 * as its own `writev` (it corks the socket and uncorks it on the next tick); a stream whose frames arrive a few
 * promise hops apart therefore costs one system call per frame. Here the socket stays corked until the end of the
 * current event-loop turn (`setImmediate`), so every frame written in that turn, on every streaming response, leaves
 * in one `writev` per socket. `res.end()` still flushes at once (Node uncorks on end).
 */
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Sockets corked in this turn; all uncorked by one `setImmediate`. */
const corked = new Set<Socket>();
let scheduled = false;

function uncorkAll(): void {
  scheduled = false;
  for (const socket of corked) socket.uncork();
  corked.clear();
}

/** Corks `socket` unless it is gone or corked already (by a response before this one on it); whether it did. */
function corkIfIdle(socket: Socket | null): socket is Socket {
  if (socket === null || socket.writableCorked > 0 || socket.destroyed) return false;
  socket.cork();
  return true;
}

function corkUntilTurnEnd(socket: Socket | null): void {
  if (!corkIfIdle(socket)) return;
  corked.add(socket);
  if (!scheduled) {
    scheduled = true;
    setImmediate(uncorkAll);
  }
}

/** What Node's response keeps about its socket and its unsent output (Node 20's `_http_outgoing`). */
interface ResponseInternals {
  chunkedEncoding?: boolean;
  outputData?: unknown[];
}

/**
 * Whether a string frame may go to the socket as one chunk of the chunked body, as Node's `res.write` would send it
 * in four pieces (size, CRLF, data, CRLF): headers sent, chunked, the socket this response's and writable, nothing of
 * it still queued in the response (a pipelined response waiting for its turn writes through Node).
 */
function framesDirectly(res: ServerResponse, socket: Socket | null): socket is Socket {
  const internals = res as ServerResponse & ResponseInternals;
  return (
    socket !== null &&
    res.headersSent &&
    internals.chunkedEncoding === true &&
    !res.writableEnded &&
    !res.destroyed &&
    !socket.destroyed &&
    socket.writable &&
    (socket as Socket & { _httpMessage?: unknown })._httpMessage === res &&
    internals.outputData?.length === 0
  );
}

/**
 * Makes `res` coalesce its writes per event-loop turn, and write each string frame of a chunked body as one socket
 * write: the size line, the frame and its CRLF in one string, the bytes Node writes (in four socket writes, each
 * buffered by the corked socket and handed to `writev` as its own piece). A `false` (the socket's buffer is full) is
 * followed by the response's `drain` when the socket drains, as Node's own writes are.
 */
export function coalesceWritesPerTurn(res: ServerResponse): void {
  const write = res.write as (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
  res.write = function coalescedWrite(
    this: ServerResponse,
    chunk: unknown,
    encoding?: unknown,
    callback?: unknown,
  ): boolean {
    const socket = this.socket as Socket | null;
    corkUntilTurnEnd(socket);
    if (typeof chunk !== "string" || chunk === "" || encoding !== undefined || callback !== undefined) {
      return write.call(this, chunk, encoding, callback);
    }
    if (!framesDirectly(this, socket)) return write.call(this, chunk);
    const flowing = socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
    if (!flowing) socket.once("drain", () => this.emit("drain"));
    return flowing;
  } as ServerResponse["write"];
}

function uncorkOne(socket: Socket): void {
  socket.uncork();
}

/**
 * Writes `res`'s headers corked until the promise jobs now queued have run: the first frames of a stream, which the
 * same jobs write, leave with the headers in one `writev` (a plain `flushHeaders()` is a system call of its own), and
 * they leave then, not at the end of the event-loop turn as later frames do: `process.nextTick` runs once the
 * microtask queue is empty, while a `setImmediate` waits for the rest of the poll phase (the first token's time,
 * docs/performance.md). A socket corked already (a response before this one on it, in this turn) stays as it is.
 */
export function flushHeadersCoalesced(res: ServerResponse): void {
  const socket = res.socket as Socket | null;
  if (corkIfIdle(socket)) process.nextTick(uncorkOne, socket);
  res.flushHeaders();
}
