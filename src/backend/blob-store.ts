/**
 * The client-side KV blob store of docs/protocol.md §5.3. Blob ids are SHA-256 of the blob bytes (32 raw bytes),
 * keyed by lowercase hex. Every operation is synchronous so `get_blob_args` / `set_blob_args` are answered at once.
 */
import { hash } from "node:crypto";

/** A content-addressed blob map used for the lifetime of one turn. */
export interface BlobStore {
  /** The blob for a raw id, or undefined when unknown. */
  get(id: Uint8Array): Uint8Array | undefined;
  /**
   * Stores a blob under the id the server chose (server ids are stored verbatim, §5.3 / §9 item 6). The caller does
   * not change `data` afterwards; a view of a much larger buffer is copied.
   */
  set(id: Uint8Array, data: Uint8Array): void;
  /**
   * Stores a blob under its SHA-256 and returns the raw id. The store keeps `data` itself (no copy): callers hand over
   * bytes they just encoded and do not change them afterwards.
   */
  put(data: Uint8Array): Uint8Array;
  has(id: Uint8Array): boolean;
  /** Number of blobs held. */
  readonly size: number;
  /** A copy of the contents keyed by lowercase hex id. */
  snapshot(): Map<string, Uint8Array>;
}

/** SHA-256 of the bytes: the blob id Cursor's clients compute (§5.3). */
export function blobIdOf(data: Uint8Array): Uint8Array {
  // One-shot hash: a rebuild hashes one blob per history message, and createHash's object per call costs more.
  return new Uint8Array(hash("sha256", data, "buffer"));
}

/** Lowercase hex of a blob id. */
export function toHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString("hex");
}

/** Raw bytes of a hex blob id. */
export function fromHex(hex: string): Uint8Array {
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** The in-memory store: one Map, methods on the prototype (a parked turn keeps one of these). */
class MemoryBlobStore implements BlobStore {
  private readonly blobs: Map<string, Uint8Array>;

  constructor(initial: Iterable<readonly [string, Uint8Array]> | undefined) {
    this.blobs = new Map(initial === undefined ? [] : [...initial].map(([k, v]) => [k, v]));
  }

  get(id: Uint8Array): Uint8Array | undefined {
    return this.blobs.get(toHex(id));
  }

  set(id: Uint8Array, data: Uint8Array): void {
    // Server blobs arrive as views into the decoded message's buffer. A view that is most of its buffer is kept as
    // it is (a multi-megabyte turn blob is not copied again); a small view is copied so it does not pin the rest.
    this.blobs.set(toHex(id), data.byteLength * 2 >= data.buffer.byteLength ? data : data.slice());
  }

  put(data: Uint8Array): Uint8Array {
    const id = blobIdOf(data);
    const key = toHex(id);
    if (!this.blobs.has(key)) this.blobs.set(key, data);
    return id;
  }

  has(id: Uint8Array): boolean {
    return this.blobs.has(toHex(id));
  }

  get size(): number {
    return this.blobs.size;
  }

  snapshot(): Map<string, Uint8Array> {
    return new Map(this.blobs);
  }
}

/** Creates an in-memory blob store, optionally seeded with persisted blobs (hex id → bytes). */
export function createBlobStore(initial?: Iterable<readonly [string, Uint8Array]>): BlobStore {
  return new MemoryBlobStore(initial);
}
