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

/**
 * Looks for any of a few byte strings in the bytes of a body over the limit, which is read to its end and dropped
 * anyway: what the 413 says can depend on what the body held (a body within the limit never pays for it). A mark
 * split between two chunks is found too (the end of the chunk before is joined with the start of the next).
 */
export class MarkSniffer {
  /** True once any mark was seen. */
  found = false;
  private readonly seam: number;
  private tail: Buffer = Buffer.alloc(0);

  constructor(private readonly marks: readonly Buffer[]) {
    this.seam = Math.max(0, ...marks.map((mark) => mark.length - 1));
  }

  feed(chunk: Buffer): void {
    if (this.found || this.marks.length === 0) return;
    const joined = Buffer.concat([this.tail, chunk.subarray(0, this.seam)]);
    if (this.marks.some((mark) => chunk.includes(mark) || joined.includes(mark))) {
      this.found = true;
      return;
    }
    const end = chunk.length >= this.seam ? chunk.subarray(chunk.length - this.seam) : joined;
    this.tail = Buffer.from(end.subarray(Math.max(0, end.length - this.seam)));
  }
}

/**
 * Keeps a body's chunks while it stays within `maxBytes`; past it, drops them and looks for `marks` in every byte of
 * the body (the sniffer is made only then).
 */
class Collector {
  chunks: Buffer[] | undefined = [];
  sniffer: MarkSniffer | undefined;
  /** Bytes added so far. */
  bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly marks: readonly Buffer[] = [],
  ) {}

  add(buffer: Buffer): void {
    this.bytes += buffer.length;
    if (this.chunks === undefined) {
      this.sniffer?.feed(buffer);
      return;
    }
    if (this.bytes <= this.maxBytes) {
      this.chunks.push(buffer);
      return;
    }
    if (this.marks.length > 0) {
      const sniffer = new MarkSniffer(this.marks);
      for (const kept of this.chunks) sniffer.feed(kept);
      sniffer.feed(buffer);
      this.sniffer = sniffer;
    }
    this.chunks = undefined;
  }
}

/**
 * Reads a Node request's body. With a declared `content-length` (`declaredBytes`), the body is whole once that many
 * bytes came: Node's parser never hands a message more, so it resolves then instead of waiting for the stream's
 * `end`, which Node emits a tick after the parser's end of message (about 30 µs of every request under load, on the
 * way to the first token).
 */
function collectNode(body: NodeBody, collector: Collector, declaredBytes: number | undefined): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer | string) => {
      collector.add(typeof chunk === "string" ? Buffer.from(chunk, "latin1") : chunk);
      if (collector.bytes === declaredBytes) onEnd();
    };
    const cleanup = () => {
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onError);
      body.off("close", onClose);
    };
    const onEnd = () => {
      cleanup();
      resolve(collector.chunks);
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

async function collectWeb(stream: ReadableStream<Uint8Array> | null, collector: Collector): Promise<Collected> {
  if (stream === null) return [];
  const reader = stream.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      collector.add(Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength));
    }
  } catch {
    throw clientLeft();
  } finally {
    reader.releaseLock();
  }
  return collector.chunks;
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
    await readBody(c, new Collector(-1));
  } catch {
    // The client left; the answer goes nowhere, which is fine.
  }
}

function readBody(c: Context, collector: Collector, declaredBytes?: number): Promise<Collected> {
  const node = nodeBodyOf(c);
  if (node === undefined) return collectWeb(c.req.raw.body, collector);
  // Someone read it already (a reader of hono's cache): nothing left to read here.
  if (node.readableDidRead === true && node.readableEnded) return Promise.resolve([]);
  return collectNode(node, collector, declaredBytes);
}

/** What {@link limitBody} tells its `onError` about the body it refused. */
export interface OverLimit {
  /** Whether any of the `marks` given to limitBody was in the body. */
  marked: boolean;
}

/**
 * Creates the middleware; `onError` runs (and may throw) when the body is larger than `maxBytes`, told whether any
 * of `marks` was in it.
 */
export function limitBody(
  maxBytes: number,
  onError: (c: Context, over: OverLimit) => Response | Promise<Response>,
  marks: readonly string[] = [],
): MiddlewareHandler {
  const encodedMarks = marks.map((mark) => Buffer.from(mark));
  return async (c, next) => {
    const method = c.req.method;
    // GET and HEAD carry no body in the fetch model.
    if (method === "GET" || method === "HEAD") return next();
    // A body read before (this middleware mounted twice on one path) is in hono's cache already.
    if (counted.has(c.req.raw)) return next();
    const declared = c.req.header("transfer-encoding") === undefined ? c.req.header("content-length") : undefined;
    const declaredBytes = declared === undefined ? undefined : Number.parseInt(declared, 10);
    const collector = new Collector(
      declaredBytes !== undefined && declaredBytes > maxBytes ? -1 : maxBytes,
      encodedMarks,
    );
    // Only a plain decimal count is trusted to say when the body is whole (Node refuses any other, but be exact).
    const whole = declared !== undefined && /^\d+$/.test(declared.trim()) ? declaredBytes : undefined;
    const chunks = await readBody(c, collector, whole);
    if (chunks === undefined) return onError(c, { marked: collector.sniffer?.found === true });
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    counted.set(c.req.raw, bytes.length);
    // hono keeps each body reading's promise there (typed as its value).
    (c.req.bodyCache as unknown as { text?: Promise<string> }).text = Promise.resolve(decodeBody(bytes));
    return next();
  };
}
