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

function corkUntilTurnEnd(socket: Socket | null): void {
  if (socket === null || socket.writableCorked > 0 || socket.destroyed) return;
  socket.cork();
  corked.add(socket);
  if (!scheduled) {
    scheduled = true;
    setImmediate(uncorkAll);
  }
}

/** Makes `res` coalesce its writes per event-loop turn. */
export function coalesceWritesPerTurn(res: ServerResponse): void {
  const write = res.write as (...args: unknown[]) => boolean;
  res.write = function coalescedWrite(this: ServerResponse, ...args: unknown[]): boolean {
    corkUntilTurnEnd(this.socket as Socket | null);
    return write.apply(this, args);
  } as ServerResponse["write"];
}

/**
 * Writes `res`'s headers in this event-loop turn's coalesced write: with the first frames of a stream written in the
 * same turn, headers and frames leave in one `writev` (a plain `flushHeaders()` is a system call of its own).
 */
export function flushHeadersCoalesced(res: ServerResponse): void {
  corkUntilTurnEnd(res.socket as Socket | null);
  res.flushHeaders();
}
