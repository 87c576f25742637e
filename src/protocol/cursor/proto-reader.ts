/**
 * The protobuf reading the hand-written decoders share (streaming-decode.ts, turn-decode.ts, tool-decode.ts): a read position over one
 * message's bytes, varints, lengths and strict UTF-8. Nothing here knows a message and nothing throws: a value this
 * does not read (a varint longer than the reader's limit or truncated, a length past its end, bytes that are not
 * UTF-8) is -1 or undefined, and the decoder leaves the message to `fromBinary`, so results and errors stay the
 * library's. The mirror of proto-writer.ts.
 */

/** proto3 strings are validated as UTF-8 by `fromBinary`: the same strict decoder here. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

export class ProtoReader {
  readonly bytes: Uint8Array;
  /** Read position (one decode at a time, synchronous). */
  at: number;
  /**
   * The most bytes a varint read here may have: at most 7 (< 2^49, exact in a number); a longer one is -1 (left to
   * `fromBinary`) even when its value is small.
   */
  readonly varintBytes: number;
  /** False once a varint was read with more bytes than it needs (one ending in 0x00); the caller decides if it cares. */
  minimal = true;

  constructor(bytes: Uint8Array, at: number, varintBytes: number) {
    this.bytes = bytes;
    this.at = at;
    this.varintBytes = varintBytes;
  }

  /** The byte at {@link at}, moving past it; undefined past the end of the bytes. */
  byte(): number | undefined {
    return this.bytes[this.at++];
  }

  /** True, and past it, when the byte at {@link at} is before `end` and is `tag`; else false and nothing moves. */
  next(tag: number, end: number): boolean {
    if (this.at >= end || this.bytes[this.at] !== tag) return false;
    this.at++;
    return true;
  }

  /** A varint of at most {@link varintBytes} bytes at {@link at} before `end`; -1 when longer or truncated. */
  varint(end: number): number {
    const bytes = this.bytes;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < this.varintBytes && this.at < end; i++) {
      const byte = bytes[this.at++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (byte === 0 && i > 0) this.minimal = false;
        return value;
      }
      scale *= 128;
    }
    return -1;
  }

  /** A uint32 field's value (wire type 0 read by the caller); -1 when it is not one `fromBinary` reads unchanged. */
  uint32(end: number): number {
    const value = this.varint(end);
    return value > 0xffffffff ? -1 : value;
  }

  /**
   * A proto3 uint32 field with tag `tag` if it comes next: 0 when absent, -1 when it is not one `fromBinary` reads
   * unchanged.
   */
  optionalUint32(tag: number, end: number): number {
    return this.next(tag, end) ? this.uint32(end) : 0;
  }

  /** The end of a length-delimited field's bytes starting at {@link at}; -1 when it runs past `end`. */
  lengthEnd(end: number): number {
    const length = this.varint(end);
    return length < 0 || this.at + length > end ? -1 : this.at + length;
  }

  /** A length-delimited bytes field's value (a view, not a copy), moving past it; undefined when it runs past `end`. */
  field(end: number): Uint8Array | undefined {
    const valueEnd = this.lengthEnd(end);
    if (valueEnd < 0) return undefined;
    const value = this.bytes.subarray(this.at, valueEnd);
    this.at = valueEnd;
    return value;
  }

  /** A length-delimited string field's value, moving past it; undefined when it runs past `end` or is not UTF-8. */
  string(end: number): string | undefined {
    const valueEnd = this.lengthEnd(end);
    if (valueEnd < 0) return undefined;
    try {
      const value = utf8.decode(this.bytes.subarray(this.at, valueEnd));
      this.at = valueEnd;
      return value;
    } catch {
      return undefined;
    }
  }

  /** A proto3 string field with tag `tag` if it comes next: "" when absent, undefined when it is not one read here. */
  optionalString(tag: number, end: number): string | undefined {
    return this.next(tag, end) ? this.string(end) : "";
  }
}
