/**
 * Request body size limit, counted as the bytes arrive whatever the framing (a declared `content-length`, chunked
 * transfer coding, HTTP/2 DATA frames). The middleware reads every request body itself, straight from Node's request
 * (or, under `app.request()`, from the web stream), and hands the text to the handler through hono's body cache, so
 * `c.req.text()` and `c.req.json()` read it from there. A body declared over the limit is never kept; one that
 * passes the limit while it arrives stops being kept at that byte. Either way the rest is read and thrown away,
 * chunk by chunk, before the 413 goes out: a client still uploading when the server answers and closes gets a
 * connection reset instead of the answer (curl, undici, the SDKs and a client that reads only after sending report
 * ECONNRESET or EPIPE then). A body that is not UTF-8 is a 400 (never decoded with replacement characters). That read has no byte cap: the listener's body timeout (`--body-timeout`, 30 s by
 * default) bounds it, as it bounds any upload. The counted size is what the large-body gate admits
 * ({@link countedBodyBytes}).
 *
 * Why not hono's `bodyLimit`: it touches `c.req.raw.body`, which makes @hono/node-server build a full web `Request`
 * around a web stream of the socket for every POST (measured at about 0.3 ms CPU per chat completion under the
 * benchmark's load), and it reads a body declared over the limit only to answer 413 before the client has sent it.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ProxyError } from "../util/errors.js";

/** What a Node request looks like to the reader (IncomingMessage or Http2ServerRequest). */
interface NodeBody {
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
  readonly readableEnded: boolean;
  readonly readableDidRead?: boolean;
  readonly destroyed: boolean;
  resume(): unknown;
}

function nodeBodyOf(c: Context): NodeBody | undefined {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (typeof incoming !== "object" || incoming === null) return undefined;
  const body = incoming as Partial<NodeBody>;
  if (typeof body.on !== "function" || typeof body.resume !== "function") return undefined;
  return body as NodeBody;
}

/** The body's chunks when it stays within `maxBytes`, else `undefined` (the rest read and dropped). */
type Collected = Buffer[] | undefined;

function clientLeft(): ProxyError {
  return new ProxyError("canceled", "The client disconnected while it sent its request body.");
}

function collectNode(body: NodeBody, maxBytes: number): Promise<Collected> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] | undefined = [];
    let bytes = 0;
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk;
      bytes += buffer.length;
      if (chunks === undefined) return;
      if (bytes > maxBytes) chunks = undefined;
      else chunks.push(buffer);
    };
    const cleanup = () => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      body.off("close", onClose);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks);
    };
    const onError = () => {
      cleanup();
      reject(clientLeft());
    };
    const onClose = () => (body.readableEnded ? onEnd() : onError());
    if (body.readableEnded) return resolve([]);
    if (body.destroyed) return reject(clientLeft());
    body.on("data", onData);
    body.on("end", onEnd);
    body.on("error", onError);
    body.on("close", onClose);
    body.resume();
  });
}

async function collectWeb(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Collected> {
  if (stream === null) return [];
  const reader = stream.getReader();
  let chunks: Buffer[] | undefined = [];
  let bytes = 0;
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      bytes += read.value.byteLength;
      if (chunks === undefined) continue;
      if (bytes > maxBytes) chunks = undefined;
      else chunks.push(Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength));
    }
  } catch {
    throw clientLeft();
  } finally {
    reader.releaseLock();
  }
  return chunks;
}

/**
 * As the fetch API decodes a body (a byte order mark is dropped), as hono's `c.req.text()` would, except that bytes
 * that are not UTF-8 are refused instead of replaced with U+FFFD: a body is never silently altered. One pass, no
 * more work than the replacing decoder.
 */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeBody(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProxyError(
      "invalid_request",
      "The request body is not valid UTF-8; send JSON encoded as UTF-8 (nothing was changed or sent on).",
      { param: "body", detail: "bad_request" },
    );
  }
}

/** Bytes of the body the middleware read, per request. */
const counted = new WeakMap<Request, number>();

/** The size of the request's body as {@link limitBody} counted it (0 before it ran, or for a bodiless method). */
export function countedBodyBytes(c: Context): number {
  return counted.get(c.req.raw) ?? 0;
}

/** Reads and drops whatever is left of the request's body (nothing kept), for an answer that does not need it. */
export async function discardBody(c: Context): Promise<void> {
  try {
    await readBody(c, -1);
  } catch {
    // The client left; the answer goes nowhere, which is fine.
  }
}

async function readBody(c: Context, maxBytes: number): Promise<Collected> {
  const node = nodeBodyOf(c);
  if (node === undefined) return collectWeb(c.req.raw.body, maxBytes);
  // Someone read it already (a reader of hono's cache): nothing left to read here.
  if (node.readableDidRead === true && node.readableEnded) return [];
  return collectNode(node, maxBytes);
}

/** Creates the middleware; `onError` runs (and may throw) when the body is larger than `maxBytes`. */
export function limitBody(maxBytes: number, onError: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    // GET and HEAD carry no body in the fetch model.
    if (method === "GET" || method === "HEAD") return next();
    // A body read before (this middleware mounted twice on one path) is in hono's cache already.
    if (counted.has(c.req.raw)) return next();
    const declared = c.req.header("transfer-encoding") === undefined ? c.req.header("content-length") : undefined;
    const chunks = await readBody(
      c,
      declared !== undefined && Number.parseInt(declared, 10) > maxBytes ? -1 : maxBytes,
    );
    if (chunks === undefined) return onError(c);
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    counted.set(c.req.raw, bytes.length);
    // hono keeps each body reading's promise there (typed as its value).
    (c.req.bodyCache as unknown as { text?: Promise<string> }).text = Promise.resolve(decodeBody(bytes));
    return next();
  };
}
