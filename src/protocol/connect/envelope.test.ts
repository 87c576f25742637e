import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../util/errors.js";
import {
  createEnvelopeReader,
  EnvelopeError,
  encodeEndStream,
  encodeEnvelope,
  FLAG_COMPRESSED,
  FLAG_END_STREAM,
  parseEndStream,
} from "./envelope.js";

const bytes = (...values: number[]) => Uint8Array.from(values);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
};

describe("envelope reader", () => {
  const a = encodeEnvelope(0, bytes(1, 2, 3));
  const b = encodeEnvelope(0, bytes(4, 5, 6, 7, 8, 9));
  const end = encodeEndStream();

  it("reads frames pushed one byte at a time", () => {
    const reader = createEnvelopeReader();
    const all = concat(a, b, end);
    const frames = [...all].flatMap((byte) => reader.push(bytes(byte)));
    reader.end();
    expect(frames.map((f) => [f.flags, [...f.data]])).toEqual([
      [0, [1, 2, 3]],
      [0, [4, 5, 6, 7, 8, 9]],
      [FLAG_END_STREAM, [...new TextEncoder().encode("{}")]],
    ]);
  });

  it("reads a frame split across chunks and several frames in one chunk", () => {
    const reader = createEnvelopeReader();
    const all = concat(a, b);
    expect(reader.push(all.subarray(0, 6))).toEqual([]);
    expect(reader.push(all.subarray(6, 10)).map((f) => [...f.data])).toEqual([[1, 2, 3]]);
    expect(reader.push(all.subarray(10)).map((f) => [...f.data])).toEqual([[4, 5, 6, 7, 8, 9]]);
    const reader2 = createEnvelopeReader();
    expect(reader2.push(concat(a, b, a))).toHaveLength(3);
  });

  it("decompresses gzip frames (flag 0x01)", () => {
    const payload = new TextEncoder().encode("hello hello hello");
    const frame = encodeEnvelope(FLAG_COMPRESSED, gzipSync(payload));
    const [decoded] = createEnvelopeReader().push(frame);
    expect(decoded?.flags).toBe(FLAG_COMPRESSED);
    expect(new TextDecoder().decode(decoded?.data)).toBe("hello hello hello");
  });

  it("rejects a compressed flag on data that is not gzip", () => {
    expect(() => createEnvelopeReader().push(encodeEnvelope(FLAG_COMPRESSED, bytes(1, 2, 3)))).toThrow(EnvelopeError);
  });

  it("parses end-of-stream {} and a JSON error", () => {
    const [clean] = createEnvelopeReader().push(end);
    expect(parseEndStream(clean!.data)).toEqual({ metadata: {} });
    const errorFrame = encodeEndStream({
      error: {
        code: "resource_exhausted",
        message: "usage limit",
        details: [{ type: "aiserver.v1.ErrorDetails", value: "CAo" }],
      },
      metadata: { "x-trace": ["1"] },
    });
    const [frame] = createEnvelopeReader().push(errorFrame);
    expect(frame!.flags & FLAG_END_STREAM).toBe(FLAG_END_STREAM);
    const parsed = parseEndStream(frame!.data);
    expect(parsed.error?.code).toBe("resource_exhausted");
    expect(parsed.error?.details[0]?.type).toBe("aiserver.v1.ErrorDetails");
    expect(parsed.metadata).toEqual({ "x-trace": ["1"] });
  });

  it("rejects end-of-stream payloads that are not JSON objects", () => {
    expect(() => parseEndStream(new TextEncoder().encode("{oops"))).toThrow(/not valid JSON/);
    expect(() => parseEndStream(new TextEncoder().encode("[1]"))).toThrow(/not a JSON object/);
  });

  it("treats a truncated trailing frame as an error at end()", () => {
    const reader = createEnvelopeReader();
    reader.push(a.subarray(0, a.length - 1));
    expect(() => reader.end()).toThrow(/truncated/);
    const headerOnly = createEnvelopeReader();
    headerOnly.push(bytes(0, 0));
    expect(() => headerOnly.end()).toThrow(EnvelopeError);
  });

  it("rejects a declared length over the maximum before allocating it", () => {
    const reader = createEnvelopeReader({ maxMessageBytes: 1024 });
    let caught: unknown;
    try {
      reader.push(bytes(0, 0xff, 0xff, 0xff, 0xf0));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EnvelopeError);
    expect(caught).toBeInstanceOf(ProxyError);
    expect((caught as ProxyError).code).toBe("backend_protocol");
    expect((caught as Error).message).toMatch(/4294967280 bytes, more than the 1024-byte limit/);
  });

  it("rejects garbage flags", () => {
    expect(() => createEnvelopeReader().push(bytes(0x40, 0, 0, 0, 0))).toThrow(/Invalid envelope flags 0x40/);
    expect(() => createEnvelopeReader().push(new TextEncoder().encode("HTTP/1.1 200"))).toThrow(EnvelopeError);
  });

  it("rejects data after end()", () => {
    const reader = createEnvelopeReader();
    reader.end();
    expect(() => reader.push(a)).toThrow(/after the end/);
  });
});

describe("envelope reader on a large frame in many chunks", () => {
  it("decodes a 1 MiB frame delivered in 1,000 chunks, as a copy that does not share the chunks' memory", () => {
    const data = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 7) % 251);
    const frame = encodeEnvelope(0, data);
    const reader = createEnvelopeReader();
    const size = Math.ceil(frame.length / 1000);
    const chunks: Uint8Array[] = [];
    const out = [];
    for (let i = 0; i < frame.length; i += size) {
      const chunk = frame.slice(i, i + size);
      chunks.push(chunk);
      out.push(...reader.push(chunk));
    }
    reader.end();
    expect(out).toHaveLength(1);
    expect(out[0]?.data).toEqual(data);
    for (const chunk of chunks) chunk.fill(0);
    expect(out[0]?.data).toEqual(data);
  });
});
