/**
 * Blob ids and the emulator's content-addressed blob cache (docs/protocol.md §5.3: id = SHA-256 of the data,
 * 32 raw bytes). The cache only ever holds data that hashes to its id, and it is only consulted for ids the received
 * state references, so a correct client uploads each blob once while a client that drops blobs still fails.
 */
import { hash } from "node:crypto";
import { blobNotFound } from "./errors.js";

/** Length of a blob id. */
export const BLOB_ID_BYTES = 32;

/** SHA-256 of the data: the blob id (§5.3). */
export function blobIdOf(data: Uint8Array): Uint8Array {
  // One-shot hash: a rebuilt conversation has one blob per history message.
  return new Uint8Array(hash("sha256", data, "buffer"));
}

/** Lower-case hex, as clients key their stores. */
export function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Throws `internal: Blob not found` unless the bytes look like a blob id (inline data where an id belongs). */
export function assertBlobId(id: Uint8Array, where: string): void {
  if (id.length !== BLOB_ID_BYTES) {
    throw blobNotFound(`${where} holds ${id.length} bytes where a ${BLOB_ID_BYTES}-byte blob id is expected`);
  }
}

/** Bounded content-addressed cache shared by the turns of one emulator. */
export interface BlobCache {
  get(id: Uint8Array): Uint8Array | undefined;
  /** Stores the data only when SHA-256(data) equals the id. */
  put(id: Uint8Array, data: Uint8Array): void;
}

/**
 * What an entry costs beyond its bytes: its 64-character hex key, the Uint8Array, its ArrayBuffer and backing store,
 * the Map's slot (about 350 bytes in a heap snapshot for a blob of 87). Counting the bytes alone let the cache of a
 * long-running emulator hold many times its size in small blobs: 15,600 of them, 5.5 MB of heap for 1.3 MB of data,
 * after 5,200 short conversations, and growing with every conversation.
 */
export const BLOB_ENTRY_OVERHEAD_BYTES = 256;

/**
 * Creates a cache evicting the oldest entries beyond `maxBytes` (default 16 MiB, each entry counted with
 * {@link BLOB_ENTRY_OVERHEAD_BYTES}); `enabled: false` never hits. A blob larger than an eighth of the cache is not
 * kept (the client is asked for it again, as from a server that does not cache), so a few multi-megabyte
 * conversations cannot pin the cache's whole size for the life of the process.
 */
export function createBlobCache(options: { enabled: boolean; maxBytes?: number }): BlobCache {
  const entries = new Map<string, Uint8Array>();
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const maxBlobBytes = maxBytes / 8;
  const cost = (data: Uint8Array) => data.length + BLOB_ENTRY_OVERHEAD_BYTES;
  let size = 0;
  return {
    get(id) {
      return options.enabled ? entries.get(hexOf(id)) : undefined;
    },
    put(id, data) {
      if (!options.enabled || id.length !== BLOB_ID_BYTES || data.length > maxBlobBytes) return;
      const key = hexOf(id);
      if (entries.has(key) || hexOf(blobIdOf(data)) !== key) return;
      entries.set(key, data);
      size += cost(data);
      for (const [oldest, value] of entries) {
        if (size <= maxBytes) break;
        entries.delete(oldest);
        size -= cost(value);
      }
    },
  };
}
