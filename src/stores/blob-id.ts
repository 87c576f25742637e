/**
 * Blob ids of docs/protocol.md §5.3: SHA-256 of the blob bytes (32 raw bytes), keyed by lowercase hex in every store.
 */
import { hash } from "node:crypto";

/** SHA-256 of the bytes: the blob id Cursor's clients compute (§5.3). */
export function blobIdOf(data: Uint8Array): Uint8Array {
  // One-shot hash: a rebuild hashes one blob per history message, and createHash's object per call costs more.
  return new Uint8Array(hash("sha256", data, "buffer"));
}

/** Lowercase hex of a blob id. */
export function toHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString("hex");
}
