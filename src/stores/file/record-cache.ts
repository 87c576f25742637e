/**
 * The file conversation store's memory side (conversation-store.ts has the design): recently used records in a cache
 * bounded by what they cost, and the test a save passes before it writes anything. Loads of a conversation that is
 * still warm, and saves that repeat what is stored (a turn may report the same checkpoint more than once), never reach
 * the disk.
 */
import type { ConversationRecord } from "../types.js";

/** Same content as far as a continuation is concerned (updatedAt aside). */
export function sameRecord(a: ConversationRecord | undefined, b: ConversationRecord): boolean {
  if (a === undefined || a.coveredMessages !== b.coveredMessages || a.fingerprint !== b.fingerprint) return false;
  if (a.blobs.size !== b.blobs.size || !Buffer.from(a.checkpoint).equals(Buffer.from(b.checkpoint))) return false;
  for (const id of b.blobs.keys()) if (!a.blobs.has(id)) return false;
  return true;
}

/**
 * What a cached record costs in memory, not just its bytes: each record and each blob is also a handful of objects
 * (the record, its Map, a 64-character hex key, a Uint8Array and its backing store). Counting the bytes alone let a
 * cache of small records hold several times its budget (a soak of 12,000 short conversations kept most of them).
 */
const RECORD_OVERHEAD_BYTES = 512;
const BLOB_OVERHEAD_BYTES = 256;

/** What {@link RecordCache} charges for `record`. */
export function sizeOf(record: ConversationRecord): number {
  let bytes = record.checkpoint.byteLength + RECORD_OVERHEAD_BYTES;
  for (const blob of record.blobs.values()) bytes += blob.byteLength + BLOB_OVERHEAD_BYTES;
  return bytes;
}

/** Records by file name, least recently used first, bounded by their byte size. */
export class RecordCache {
  private readonly records = new Map<string, ConversationRecord>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(name: string): ConversationRecord | undefined {
    const record = this.records.get(name);
    if (record !== undefined) {
      this.records.delete(name);
      this.records.set(name, record);
    }
    return record;
  }

  set(name: string, record: ConversationRecord): void {
    this.delete(name);
    const size = sizeOf(record);
    if (size > this.maxBytes / 4) return;
    this.records.set(name, record);
    this.bytes += size;
    for (const [oldest, value] of this.records) {
      if (this.bytes <= this.maxBytes) break;
      this.records.delete(oldest);
      this.bytes -= sizeOf(value);
    }
  }

  delete(name: string): void {
    const record = this.records.get(name);
    if (record === undefined) return;
    this.records.delete(name);
    this.bytes -= sizeOf(record);
  }
}
