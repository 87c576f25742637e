import { describe, expect, it } from "vitest";
import { BLOB_ENTRY_OVERHEAD_BYTES, blobIdOf, createBlobCache } from "./blobs.js";

describe("createBlobCache", () => {
  const data = new TextEncoder().encode("hello");
  const id = blobIdOf(data);

  it("keeps only data whose SHA-256 is its id", () => {
    const cache = createBlobCache({ enabled: true });
    cache.put(id, new TextEncoder().encode("other"));
    expect(cache.get(id)).toBeUndefined();
    cache.put(id, data);
    expect(cache.get(id)).toEqual(data);
  });

  it("evicts the oldest entries beyond its size and never hits when disabled", () => {
    const cache = createBlobCache({ enabled: true, maxBytes: 8 * (2 + BLOB_ENTRY_OVERHEAD_BYTES) });
    const blobs = Array.from({ length: 9 }, (_, i) => new Uint8Array([i, i]));
    for (const blob of blobs) cache.put(blobIdOf(blob), blob);
    expect(cache.get(blobIdOf(blobs[0] ?? new Uint8Array()))).toBeUndefined();
    expect(cache.get(blobIdOf(blobs[8] ?? new Uint8Array()))).toEqual(blobs[8]);
    const off = createBlobCache({ enabled: false });
    off.put(id, data);
    expect(off.get(id)).toBeUndefined();
  });

  it("does not keep a blob larger than an eighth of its size (a few huge blobs would pin it)", () => {
    const maxBytes = 8 * 400;
    const cache = createBlobCache({ enabled: true, maxBytes });
    const small = new Uint8Array(maxBytes / 8).fill(1);
    const large = new Uint8Array(maxBytes / 8 + 1).fill(2);
    cache.put(blobIdOf(small), small);
    cache.put(blobIdOf(large), large);
    expect(cache.get(blobIdOf(small))).toEqual(small);
    expect(cache.get(blobIdOf(large))).toBeUndefined();
  });

  it("counts what each entry costs beyond its bytes, so small blobs cannot hold many times its size", () => {
    const perEntry = 4 + BLOB_ENTRY_OVERHEAD_BYTES;
    const cache = createBlobCache({ enabled: true, maxBytes: 100 * perEntry });
    const blobs = Array.from({ length: 1_000 }, (_, i) => new Uint8Array(new Uint32Array([i]).buffer));
    for (const blob of blobs) cache.put(blobIdOf(blob), blob);
    const kept = blobs.filter((blob) => cache.get(blobIdOf(blob)) !== undefined);
    expect(kept).toHaveLength(100);
    expect(kept[0]).toEqual(blobs[900]);
  });
});
