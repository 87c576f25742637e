/**
 * Which blobs a checkpoint still needs. Every `bytes` field of the *Structure messages is a 32-byte blob id
 * (docs/protocol.md §4.11), and blobs set by the server may themselves be serialized structures that reference
 * more blobs. Rather than hard-coding today's schema (which the server extends without notice), the walk is
 * schema-free: it parses bytes as protobuf wire format, treats every 32-byte length-delimited value that names a
 * stored blob as a reference, and descends into nested messages and referenced blobs. JSON blobs simply fail to
 * parse as messages and are leaves.
 */
import type { ConversationRecord } from "./types.js";

/**
 * The protobuf wire types (the encoding's own numbers), spelled out here rather than imported from protobuf-es: the
 * stores load at every start of `serve`, before the protocol code (which would load protobuf-es's wire module).
 */
const WireType = { Varint: 0, Bit64: 1, LengthDelimited: 2, StartGroup: 3, EndGroup: 4, Bit32: 5 } as const;

const BLOB_ID_LENGTH = 32;
const MAX_DEPTH = 24;
const FAILED = -1;

/**
 * A wire-format scanner that reports malformed input with {@link FAILED} instead of throwing. Most values the walk
 * tries (JSON blobs, strings) are not messages, and with BinaryReader each of those attempts cost a thrown Error and
 * its stack trace, which made the walk the most expensive step of saving a small checkpoint. Accepts and rejects
 * exactly what BinaryReader's tag()/bytes()/skip() do (blob-graph.test.ts checks this on random input).
 */
class WireScanner {
  pos = 0;
  /** The last varint read by {@link varint32}. */
  value = 0;
  /** How many bytes the last varint took. */
  width = 0;

  constructor(private readonly buf: Uint8Array) {}

  /** Reads a uint32 varint (BinaryReader.uint32 rules: bits past 32 are dropped, at most 10 bytes). */
  varint32(): boolean {
    const { buf } = this;
    let pos = this.pos;
    let result = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= buf.length) return false;
      const b = buf[pos++] as number;
      if (i < 4) result |= (b & 0x7f) << (7 * i);
      else if (i === 4) result |= (b & 0x0f) << 28;
      if ((b & 0x80) === 0) {
        this.pos = pos;
        this.value = result >>> 0;
        this.width = i + 1;
        return true;
      }
    }
    return false;
  }

  /** Reads a tag; returns the wire type and leaves the field number in `value`, or FAILED for an illegal tag. */
  tag(): number {
    if (!this.varint32()) return FAILED;
    if (this.width > 5 || (this.width === 5 && (this.buf[this.pos - 1] as number) > 0x0f)) return FAILED;
    const wireType = this.value & 7;
    this.value >>>= 3;
    return this.value <= 0 || wireType > 5 ? FAILED : wireType;
  }

  /** Reads a length-delimited value, or undefined when it runs past the end. */
  bytes(): Uint8Array | undefined {
    if (!this.varint32()) return undefined;
    const start = this.pos;
    const end = start + this.value;
    if (end > this.buf.length) return undefined;
    this.pos = end;
    return this.buf.subarray(start, end);
  }

  /** Skips a varint, 64-bit or 32-bit value; false when it runs past the end. */
  skip(wireType: number): boolean {
    const { buf } = this;
    if (wireType === WireType.Varint) {
      while (this.pos < buf.length) if (((buf[this.pos++] as number) & 0x80) === 0) return true;
      return false;
    }
    this.pos += wireType === WireType.Bit64 ? 8 : 4;
    return this.pos <= buf.length;
  }
}

/** Every length-delimited value of `bytes` read as a message; undefined when `bytes` is not a valid message. */
export function lengthDelimitedValues(bytes: Uint8Array): Uint8Array[] | undefined {
  const scanner = new WireScanner(bytes);
  const values: Uint8Array[] = [];
  while (scanner.pos < bytes.length) {
    const wireType = scanner.tag();
    if (wireType === FAILED || wireType === WireType.StartGroup || wireType === WireType.EndGroup) return undefined;
    if (wireType === WireType.LengthDelimited) {
      const value = scanner.bytes();
      if (value === undefined) return undefined;
      values.push(value);
    } else if (!scanner.skip(wireType)) return undefined;
  }
  return values;
}

/**
 * Hex ids of every stored blob reachable from `root` (a serialized checkpoint). `blobs` maps hex id → bytes.
 */
export function reachableBlobIds(root: Uint8Array, blobs: ReadonlyMap<string, Uint8Array>): Set<string> {
  const reached = new Set<string>();
  // Once every stored blob is reached the answer cannot grow: stop walking (the common case, since a checkpoint
  // usually still needs all it was given, and this runs on every checkpoint save).
  const done = () => reached.size === blobs.size;
  const walk = (bytes: Uint8Array, depth: number): void => {
    if (depth > MAX_DEPTH || done()) return;
    const values = lengthDelimitedValues(bytes);
    if (values === undefined) return;
    for (const value of values) {
      if (done()) return;
      if (value.length === BLOB_ID_LENGTH) {
        const hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("hex");
        const blob = blobs.get(hex);
        if (blob !== undefined) {
          if (!reached.has(hex)) {
            reached.add(hex);
            walk(blob, depth + 1);
          }
          continue;
        }
      }
      if (value.length > 1) walk(value, depth + 1);
    }
  };
  walk(root, 0);
  return reached;
}

/** The record with only the blobs its checkpoint reaches (garbage collection, §5.3); every store saves this. */
export function pruneRecord(record: ConversationRecord): ConversationRecord {
  const keep = reachableBlobIds(record.checkpoint, record.blobs);
  const blobs = new Map<string, Uint8Array>();
  for (const id of keep) {
    const blob = record.blobs.get(id);
    if (blob !== undefined) blobs.set(id, blob);
  }
  return { ...record, blobs };
}
