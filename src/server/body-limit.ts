/**
 * Request body size limit. Declared lengths are checked from the `content-length` header alone (the body is never
 * buffered: see {@link DISCARD_LIMIT_BYTES} for what happens to it); only bodies without
 * one (chunked) go through hono's streaming `bodyLimit`, which counts bytes as it reads. Why not hono's for all: it
 * touches `c.req.raw.body`, which makes @hono/node-server build a full web `Request` around a web stream of the
 * socket for every POST, and the handler's `c.req.text()` then reads through that stream instead of the adapter's
 * direct buffer path; measured at about 0.3 ms CPU per chat completion under the benchmark's load.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/**
 * A body declared over the limit but no larger than this is read and thrown away (chunk by chunk, nothing kept)
 * before the 413 goes out: a client still uploading when the server answers and closes gets a connection reset
 * instead of the answer (curl, undici and the SDKs all report ECONNRESET then). Larger ones are answered at once.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

async function discard(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      // Nothing kept.
    }
  } catch {
    // The client left; the answer below goes nowhere, which is fine.
  } finally {
    reader.releaseLock();
  }
}

/** Creates the middleware; `onError` runs (and may throw) when the body is larger than `maxBytes`. */
export function limitBody(maxBytes: number, onError: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  const streaming = bodyLimit({ maxSize: maxBytes, onError });
  return async (c, next) => {
    const method = c.req.method;
    // GET and HEAD carry no body in the fetch model (hono's middleware sees `body === null` and passes them on).
    if (method === "GET" || method === "HEAD") return next();
    const declared = c.req.header("content-length");
    if (declared !== undefined && c.req.header("transfer-encoding") === undefined) {
      const bytes = Number.parseInt(declared, 10);
      if (!(bytes > maxBytes)) return next();
      if (bytes <= DISCARD_LIMIT_BYTES) await discard(c.req.raw.body);
      return onError(c);
    }
    return streaming(c, next);
  };
}
