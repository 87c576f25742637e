/**
 * The in-memory {@link BlobStore} of one turn: one Map keyed by lowercase hex id, methods on the prototype (a parked
 * turn keeps one of these).
 */
import { blobIdOf, toHex } from "../blob-id.js";
import type { BlobStore } from "../types.js";

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
