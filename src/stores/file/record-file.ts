/**
 * The bytes of one stored conversation record (file-conversation-store.ts).
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
 */
import { z } from "zod";
import type { ConversationRecord } from "../types.js";

const MAGIC = Buffer.from("cbconv2\n", "latin1");
const HEX_ID = z.string().regex(/^[0-9a-f]+$/);

const headerSchema = z.object({
  conversationId: z.string(),
  coveredMessages: z.number().int().nonnegative(),
  fingerprint: z.string(),
  updatedAt: z.number(),
  checkpointBytes: z.number().int().nonnegative(),
  blobs: z.array(z.tuple([HEX_ID, z.number().int().nonnegative()])),
});

const legacySchema = z.object({
  version: z.literal(1),
  conversationId: z.string(),
  checkpoint: z.string(),
  coveredMessages: z.number().int().nonnegative(),
  fingerprint: z.string(),
  updatedAt: z.number(),
  blobs: z.record(HEX_ID, z.string()),
});

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

function decodeLegacy(bytes: Buffer): ConversationRecord {
  const parsed = legacySchema.parse(JSON.parse(bytes.toString("utf8")));
  const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"));
  return {
    conversationId: parsed.conversationId,
    checkpoint: fromBase64(parsed.checkpoint),
    coveredMessages: parsed.coveredMessages,
    fingerprint: parsed.fingerprint,
    updatedAt: parsed.updatedAt,
    blobs: new Map(Object.entries(parsed.blobs).map(([id, data]) => [id, fromBase64(data)])),
  };
}

/**
 * The record in a file's bytes (either format). The checkpoint and blobs are views into `bytes`.
 * @throws on anything that is not a complete, well-formed record.
 */
export function decodeRecord(bytes: Buffer): ConversationRecord {
  if (!bytes.subarray(0, MAGIC.byteLength).equals(MAGIC)) return decodeLegacy(bytes);
  if (bytes.byteLength < MAGIC.byteLength + 4) throw new Error("truncated record header");
  const headerLength = bytes.readUInt32BE(MAGIC.byteLength);
  let offset = MAGIC.byteLength + 4;
  if (offset + headerLength > bytes.byteLength) throw new Error("truncated record header");
  const header = headerSchema.parse(JSON.parse(bytes.toString("utf8", offset, offset + headerLength)));
  offset += headerLength;
  const take = (length: number) => {
    if (offset + length > bytes.byteLength) throw new Error("truncated record");
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset + offset, length);
    offset += length;
    return view;
  };
  const checkpoint = take(header.checkpointBytes);
  const blobs = new Map<string, Uint8Array>();
  for (const [id, length] of header.blobs) blobs.set(id, take(length));
  if (offset !== bytes.byteLength) throw new Error("trailing bytes after the record");
  return {
    conversationId: header.conversationId,
    checkpoint,
    coveredMessages: header.coveredMessages,
    fingerprint: header.fingerprint,
    updatedAt: header.updatedAt,
    blobs,
  };
}
