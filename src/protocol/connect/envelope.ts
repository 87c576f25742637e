/**
 * The one Connect envelope reader and writer (docs/protocol.md §4.1). Everything that frames by hand — the HTTP/2
 * `Run`, the RunSSE + BidiAppend path and the emulator's raw edges — goes through this module; connect-es does the
 * rest (the unary calls).
 *
 * Frame: 1 flag byte (0x01 gzip, 0x02 end-of-stream, 0x80 gRPC-Web trailer), 4-byte big-endian length, payload.
 */
import { gunzipSync } from "node:zlib";
import { ProxyError } from "../../util/errors.js";

/** Flag bit: payload is gzip-compressed. */
export const FLAG_COMPRESSED = 0x01;
/** Flag bit: Connect end-of-stream frame (JSON payload). */
export const FLAG_END_STREAM = 0x02;
/** Flag bit: gRPC-Web trailer frame (header-style text payload). */
export const FLAG_TRAILER = 0x80;
const KNOWN_FLAGS = FLAG_COMPRESSED | FLAG_END_STREAM | FLAG_TRAILER;
const HEADER_BYTES = 5;

/** A decoded frame; `data` is already decompressed when the frame was gzip-compressed. */
export interface Envelope {
  flags: number;
  data: Uint8Array;
}

/** Options of {@link createEnvelopeReader}. */
export interface EnvelopeReaderOptions {
  /**
   * Largest accepted payload. A larger declared length is an error raised before any allocation.
   * @default 16 MiB
   */
  maxMessageBytes?: number;
}

/** Raised for malformed framing; `code` is always `backend_protocol`. */
export class EnvelopeError extends ProxyError {
  constructor(message: string, cause?: unknown) {
    super("backend_protocol", message, cause === undefined ? {} : { cause });
    this.name = "EnvelopeError";
  }
}

/** Incremental reader: push arbitrary chunks, get whole frames back; `end()` rejects a partial trailing frame. */
export interface EnvelopeReader {
  push(chunk: Uint8Array): Envelope[];
  end(): void;
}

/** Creates an envelope reader that buffers across chunks (1-byte chunks, split frames, many frames per chunk). */
export function createEnvelopeReader(options: EnvelopeReaderOptions = {}): EnvelopeReader {
  return new ChunkedEnvelopeReader(options.maxMessageBytes ?? 16 * 1024 * 1024);
}

/**
 * The reader of {@link createEnvelopeReader}. A class rather than closures: every open Run has one, a parked turn's
 * for minutes, and one object with prototype methods holds less than a context and five closures.
 */
class ChunkedEnvelopeReader implements EnvelopeReader {
  /**
   * Unread bytes: the chunks as they arrived, the first one read up to `offset`. Chunks are never concatenated, so a
   * large frame arriving in many chunks costs one copy of its bytes (concatenating on every chunk was quadratic).
   */
  private readonly chunks: Uint8Array[] = [];
  private offset = 0;
  private buffered = 0;
  private ended = false;

  constructor(private readonly max: number) {}

  push(chunk: Uint8Array): Envelope[] {
    if (this.ended) throw new EnvelopeError("Envelope reader received data after the end of the stream.");
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const out: Envelope[] = [];
    for (let frame = this.take(); frame !== undefined; frame = this.take()) out.push(frame);
    return out;
  }

  end(): void {
    this.ended = true;
    if (this.buffered > 0) {
      throw new EnvelopeError(`Stream ended inside a frame (${this.buffered} trailing bytes): the frame is truncated.`);
    }
  }

  private byteAt(index: number): number {
    const chunks = this.chunks;
    let position = this.offset + index;
    let k = 0;
    for (let chunk = chunks[k]; chunk !== undefined && position >= chunk.length; chunk = chunks[++k]) {
      position -= chunk.length;
    }
    return chunks[k]?.[position] ?? 0;
  }

  /** Consumes `count` bytes; with `into`, copies them there. */
  private consume(count: number, into?: Uint8Array): void {
    const chunks = this.chunks;
    let done = 0;
    while (done < count) {
      const chunk = chunks[0];
      if (chunk === undefined) break;
      const step = Math.min(chunk.length - this.offset, count - done);
      into?.set(chunk.subarray(this.offset, this.offset + step), done);
      done += step;
      this.offset += step;
      if (this.offset === chunk.length) {
        chunks.shift();
        this.offset = 0;
      }
    }
    this.buffered -= count;
  }

  private take(): Envelope | undefined {
    if (this.buffered < HEADER_BYTES) return undefined;
    const flags = this.byteAt(0);
    if ((flags & ~KNOWN_FLAGS) !== 0) {
      throw new EnvelopeError(`Invalid envelope flags 0x${flags.toString(16).padStart(2, "0")}: not a Connect frame.`);
    }
    const length = ((this.byteAt(1) << 24) >>> 0) + (this.byteAt(2) << 16) + (this.byteAt(3) << 8) + this.byteAt(4);
    const max = this.max;
    if (length > max) {
      throw new EnvelopeError(`Envelope declares ${length} bytes, more than the ${max}-byte limit.`);
    }
    if (this.buffered < HEADER_BYTES + length) return undefined;
    this.consume(HEADER_BYTES);
    // Always a fresh copy (never a view of a chunk): decoded `bytes` fields must not pin the network chunks.
    const payload = new Uint8Array(length);
    this.consume(length, payload);
    return { flags, data: (flags & FLAG_COMPRESSED) !== 0 ? gunzip(payload, max) : payload };
  }
}

function gunzip(payload: Uint8Array, max: number): Uint8Array {
  try {
    return new Uint8Array(gunzipSync(payload, { maxOutputLength: max }));
  } catch (error) {
    throw new EnvelopeError("Compressed envelope could not be decompressed as gzip.", error);
  }
}

/** Encodes one frame. */
export function encodeEnvelope(flags: number, data: Uint8Array): Uint8Array {
  const length = data.length;
  const out = new Uint8Array(HEADER_BYTES + length);
  out[0] = flags;
  // The big-endian length by hand: a DataView is an object per frame, and `out.buffer` moves a small array's bytes
  // off the heap into an ArrayBuffer of its own.
  out[1] = length >>> 24;
  out[2] = (length >>> 16) & 0xff;
  out[3] = (length >>> 8) & 0xff;
  out[4] = length & 0xff;
  out.set(data, HEADER_BYTES);
  return out;
}

/** A Connect end-of-stream error as carried in the JSON payload. */
export interface EndStreamError {
  code: string;
  message: string;
  details: { type: string; value: string }[];
}

/** Parsed end-of-stream payload: `error` is absent for a clean end (`{}`). */
export interface EndStream {
  error?: EndStreamError;
  metadata: Record<string, string[]>;
}

/** Encodes a Connect end-of-stream frame (`{}` for a clean end). */
export function encodeEndStream(end: EndStream = { metadata: {} }): Uint8Array {
  const body: Record<string, unknown> = {};
  if (end.error !== undefined) body.error = end.error;
  if (Object.keys(end.metadata).length > 0) body.metadata = end.metadata;
  return encodeEnvelope(FLAG_END_STREAM, new TextEncoder().encode(JSON.stringify(body)));
}

/** Parses the JSON of an end-of-stream frame; malformed JSON is a typed error. */
export function parseEndStream(data: Uint8Array): EndStream {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(data));
  } catch (error) {
    throw new EnvelopeError("End-of-stream frame is not valid JSON.", error);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new EnvelopeError("End-of-stream frame is not a JSON object.");
  }
  const { error, metadata } = json as { error?: unknown; metadata?: unknown };
  const result: EndStream = { metadata: toMetadata(metadata) };
  if (error !== undefined && error !== null) result.error = toEndStreamError(error);
  return result;
}

function toEndStreamError(error: unknown): EndStreamError {
  if (typeof error !== "object" || error === null) throw new EnvelopeError("End-of-stream error is not an object.");
  const { code, message, details } = error as { code?: unknown; message?: unknown; details?: unknown };
  return {
    code: typeof code === "string" ? code : "unknown",
    message: typeof message === "string" ? message : "",
    details: Array.isArray(details)
      ? details.flatMap((d: unknown) => {
          if (typeof d !== "object" || d === null) return [];
          const { type, value } = d as { type?: unknown; value?: unknown };
          return typeof type === "string" && typeof value === "string" ? [{ type, value }] : [];
        })
      : [],
  };
}

function toMetadata(metadata: unknown): Record<string, string[]> {
  if (typeof metadata !== "object" || metadata === null) return {};
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (Array.isArray(value)) out[key] = value.filter((v): v is string => typeof v === "string");
  }
  return out;
}
