/**
 * The protobuf writing the hand-written encoders share (streaming-encode.ts, run-request-encode.ts): sizes computed
 * first, then one buffer of exactly that size filled in order, producing the bytes `toBinary` would. Nothing here
 * knows a message: each encoder checks that a message has a layout it writes and falls back to `toBinary` otherwise.
 */

const utf8 = new TextEncoder();

/** True when a decoded or created message carries unknown fields (they must be written back: `toBinary` does). */
export function hasUnknown(message: object): boolean {
  const unknown = (message as { $unknown?: unknown[] }).$unknown;
  return unknown !== undefined && unknown.length > 0;
}

export function varintSize(value: number): number {
  let size = 1;
  for (let rest = value >>> 7; rest !== 0; rest >>>= 7) size++;
  return size;
}

/** Bytes of a length-delimited field with a one-byte tag holding `size` bytes. */
export function fieldSize(size: number): number {
  return 1 + varintSize(size) + size;
}

/**
 * The length of `value` in UTF-8 as `TextEncoder` writes it (a lone surrogate becomes U+FFFD, three bytes). Counted
 * here and written into the message's buffer: encoding each string on its own cost more than the rest together.
 */
export function utf8Length(value: string): number {
  let length = value.length;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) length += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length && isLowSurrogate(value.charCodeAt(i + 1))) {
      length += 2; // four bytes for the pair's two UTF-16 units
      i++;
    } else length += 2;
  }
  return length;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Bytes of an implicit-presence string or bytes field of `length` bytes: nothing when empty. */
export function implicitSize(length: number): number {
  return length === 0 ? 0 : fieldSize(length);
}

export class ProtoWriter {
  readonly bytes: Uint8Array;
  at = 0;

  constructor(size: number) {
    this.bytes = new Uint8Array(size);
  }

  byte(value: number): void {
    this.bytes[this.at++] = value;
  }

  tag(tag: number | readonly number[]): void {
    if (typeof tag === "number") this.bytes[this.at++] = tag;
    else for (const byte of tag) this.bytes[this.at++] = byte;
  }

  varint(value: number): void {
    let rest = value >>> 0;
    while (rest > 0x7f) {
      this.bytes[this.at++] = (rest & 0x7f) | 0x80;
      rest >>>= 7;
    }
    this.bytes[this.at++] = rest;
  }

  /** `tag`, the length, then `data`. */
  field(tag: number | readonly number[], data: Uint8Array): void {
    this.tag(tag);
    this.varint(data.byteLength);
    this.bytes.set(data, this.at);
    this.at += data.byteLength;
  }

  /** An implicit-presence bytes field: nothing when empty. */
  implicit(tag: number, data: Uint8Array): void {
    if (data.byteLength > 0) this.field(tag, data);
  }

  /** `tag`, the length, then `value` of `length` UTF-8 bytes ({@link utf8Length}). */
  string(tag: number | readonly number[], value: string, length: number): void {
    this.tag(tag);
    this.varint(length);
    if (length === value.length) {
      for (let i = 0; i < length; i++) this.bytes[this.at++] = value.charCodeAt(i);
      return;
    }
    utf8.encodeInto(value, this.bytes.subarray(this.at, this.at + length));
    this.at += length;
  }

  /** An implicit-presence string field: nothing when empty. */
  implicitString(tag: number, value: string, length: number): void {
    if (length > 0) this.string(tag, value, length);
  }
}
