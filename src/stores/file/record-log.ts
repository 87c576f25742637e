/**
 * The entries of the file conversation store's record log (conversation-store.ts has the design): segment files
 * `records-<host>-<pid>-<tag>-<seq>.log`, each a sequence of entries appended by one writer only:
 *
 *     magic "cbl\x01"        4 bytes
 *     payload length         u32, big-endian
 *     kind                   u8: 1 record, 2 tombstone, 3 sealed (the owner appends no more); then 3 zero bytes
 *     name                   32 bytes: SHA-256 of the conversation id (what names a legacy `<hex>.json` file)
 *     updatedAt              f64, big-endian: the record's save time, or when a tombstone removed the conversation
 *     header check           u32, big-endian: FNV-1a of the 52 bytes before it
 *     payload                a record's bytes in record-file.ts's format 2; empty for a tombstone or a seal
 *
 * The header alone says which conversation an entry is about and how old it is, so the store builds its map by
 * reading headers and skipping payloads. A scan stops at an entry that runs past the end of the file (an append in
 * progress, or torn by a crash: the next scan looks again) and at a header that does not check out (garbage: the rest
 * of that segment is ignored). A payload is checked only when it is read (record-decode.ts).
 */
import { type FileHandle, open } from "node:fs/promises";

export const ENTRY_MAGIC = 0x63626c01; // "cbl\x01"
export const HEADER_BYTES = 56;
/** Longest payload a header may announce (larger is garbage, not a record). */
export const MAX_PAYLOAD_BYTES = 1024 * 1024 * 1024;

export const KIND_RECORD = 1;
export const KIND_TOMBSTONE = 2;
export const KIND_SEALED = 3;
export type EntryKind = typeof KIND_RECORD | typeof KIND_TOMBSTONE | typeof KIND_SEALED;

/**
 * A segment's file name: `records-<host>-<pid>-<tag>-<seq>.log`, `host` being 8 hex digits of the SHA-256 of the
 * owner's host name (a container has a host name of its own, and pids of its own). Names without the host part
 * (written before it was added, on 2026-11-27) are read as this host's.
 */
export const SEGMENT_NAME = /^records-(?:([0-9a-f]{8})-)?(\d+)-([0-9a-f]+)-(\d+)\.log$/;

export function segmentName(host: string, pid: number, tag: string, seq: number): string {
  return `records-${host}-${pid}-${tag}-${seq}.log`;
}

/** A segment owner's host (undefined: this host's, by an older name), pid and tag; undefined for other names. */
export function ownerOf(name: string): { host: string | undefined; pid: number; tag: string } | undefined {
  const match = SEGMENT_NAME.exec(name);
  return match === null ? undefined : { host: match[1], pid: Number(match[2]), tag: match[3] ?? "" };
}

function check(header: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < HEADER_BYTES - 4; i++) {
    hash ^= header[i] ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** An entry's header. `name` is the 32-byte SHA-256 of the conversation id (zeros for a seal). */
export function encodeHeader(kind: EntryKind, name: Uint8Array, updatedAt: number, payloadBytes: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(ENTRY_MAGIC, 0);
  header.writeUInt32BE(payloadBytes, 4);
  header.writeUInt8(kind, 8);
  header.set(name.subarray(0, 32), 12);
  header.writeDoubleBE(updatedAt, 44);
  header.writeUInt32BE(check(header), 52);
  return header;
}

/** A header read back. */
export interface EntryHeader {
  kind: EntryKind;
  /** Hex of the 32-byte name. */
  name: string;
  updatedAt: number;
  payloadBytes: number;
}

/** The header at `offset` of `bytes`, or undefined when those 56 bytes are not a valid header. */
export function decodeHeader(bytes: Buffer, offset = 0): EntryHeader | undefined {
  if (bytes.readUInt32BE(offset) !== ENTRY_MAGIC) return undefined;
  const header = bytes.subarray(offset, offset + HEADER_BYTES);
  if (header.readUInt32BE(52) !== check(header)) return undefined;
  const kind = header.readUInt8(8);
  const payloadBytes = header.readUInt32BE(4);
  if (kind !== KIND_RECORD && kind !== KIND_TOMBSTONE && kind !== KIND_SEALED) return undefined;
  if (payloadBytes > MAX_PAYLOAD_BYTES || (kind !== KIND_RECORD && payloadBytes !== 0)) return undefined;
  return { kind, name: header.toString("hex", 12, 44), updatedAt: header.readDoubleBE(44), payloadBytes };
}

/** One entry found by {@link scanSegment}: its header and where its payload starts. */
export interface ScannedEntry extends EntryHeader {
  /** Offset of the entry's header in the segment. */
  offset: number;
}

/** What {@link scanSegment} found. */
export interface SegmentScan {
  entries: ScannedEntry[];
  /** Where the next scan starts: the end of the last complete entry. */
  end: number;
  /** The segment holds a header that does not check out at `end`: nothing after it is read. */
  broken: boolean;
}

const READ_CHUNK = 64 * 1024;

/**
 * Reads the entry headers of the segment at `path` from `from` on, in buffered reads of 64 KiB that skip payloads
 * larger than what is left of a chunk (a scan reads every header, not every record).
 * @throws ENOENT when the segment is gone.
 */
export async function scanSegment(path: string, from: number): Promise<SegmentScan> {
  const file = await open(path, "r");
  try {
    return await scanOpen(file, from);
  } finally {
    await file.close();
  }
}

async function scanOpen(file: FileHandle, from: number): Promise<SegmentScan> {
  const size = (await file.stat()).size;
  const entries: ScannedEntry[] = [];
  const chunk = Buffer.alloc(READ_CHUNK);
  let chunkStart = 0;
  let chunkBytes = 0;
  let position = from;
  while (position + HEADER_BYTES <= size) {
    if (position < chunkStart || position + HEADER_BYTES > chunkStart + chunkBytes) {
      chunkStart = position;
      chunkBytes = (await file.read(chunk, 0, Math.min(READ_CHUNK, size - position), position)).bytesRead;
      if (chunkBytes < HEADER_BYTES) break;
    }
    const header = decodeHeader(chunk, position - chunkStart);
    if (header === undefined) return { entries, end: position, broken: true };
    const next = position + HEADER_BYTES + header.payloadBytes;
    if (next > size) break;
    entries.push({ ...header, offset: position });
    position = next;
  }
  return { entries, end: position, broken: false };
}
