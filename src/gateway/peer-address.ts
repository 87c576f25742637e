/**
 * Who is on the other end of a request's socket: Hono's Node adapter passes `{ incoming, outgoing }` as the app's env,
 * so the peer address is the socket's, never a header a client could set. The /metrics route lets loopback peers in;
 * the admin API writes the address to the audit log.
 */
import type { Context } from "hono";

/** The peer address of the request's socket; undefined in-process (`app.request()`). */
export function peerAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: unknown } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  return typeof address === "string" ? address : undefined;
}

/** `127.0.0.0/8`, `::1`, and IPv4 loopback mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
