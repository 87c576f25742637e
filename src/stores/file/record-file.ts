/**
 * The bytes of one stored conversation record (conversation-store.ts): the payload of a record entry in the record log
 * (record-log.ts), and the content of a legacy `<sha256>.json` file (one file per conversation, written until 2026-11).
 *
 * Format 2, written since the memory-budget work (issue 12): a binary container, so blob bytes go to disk as they are
 * instead of as base64 inside a JSON document (which cost a base64 string, a JSON copy of it and a UTF-8 buffer of
 * that, each 1.3 × the blob, on every save, and as much again on every load):
 *
 *     "cbconv2\n"                      8 bytes, the magic
 *     header length                    u32, big-endian
 *     header                           UTF-8 JSON: {conversationId, coveredMessages, fingerprint, updatedAt,
 *                                      checkpointBytes, blobs: [[hex id, byte length], …]}
 *     checkpoint bytes, then each blob's bytes in header order
 *
 * Format 1 (a JSON document `{version: 1, …, checkpoint: base64, blobs: {hex id: base64}}`) is still read, so
 * existing data directories keep working; it is rewritten in format 2 on the conversation's next save.
 *
 * Reading either format is record-decode.ts, which the store loads (with zod, which checks the header) on its first
 * read rather than when a server starts.
 */
import type { ConversationRecord } from "../types.js";

/** The first bytes of a format 2 file. */
export const MAGIC = Buffer.from("cbconv2\n", "latin1");
/** The file's content as chunks to write one after the other (blob bytes are not copied). */
export function encodeRecord(record: ConversationRecord): Uint8Array[] {
  const blobs = [...record.blobs];
  const header = Buffer.from(
    JSON.stringify({
      conversationId: record.conversationId,
      coveredMessages: record.coveredMessages,
      fingerprint: record.fingerprint,
      updatedAt: record.updatedAt,
      checkpointBytes: record.checkpoint.byteLength,
      blobs: blobs.map(([id, data]) => [id, data.byteLength]),
    }),
    "utf8",
  );
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.byteLength);
  return [MAGIC, length, header, record.checkpoint, ...blobs.map(([, data]) => data)];
}
