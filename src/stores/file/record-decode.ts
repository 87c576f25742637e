/**
 * Reads a stored conversation record in either format (record-file.ts describes both), checking its header with zod.
 * The file conversation store loads this module on its first read.
 */
import * as z from "zod";
import type { ConversationRecord } from "../types.js";
import { MAGIC } from "./record-file.js";

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
