import { describe, expect, it } from "vitest";
import { blobIdOf, createBlobCache } from "./blobs.js";

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
    const cache = createBlobCache({ enabled: true, maxBytes: 6 });
    const second = new TextEncoder().encode("world!");
    cache.put(id, data);
    cache.put(blobIdOf(second), second);
    expect(cache.get(id)).toBeUndefined();
    expect(cache.get(blobIdOf(second))).toEqual(second);
    const off = createBlobCache({ enabled: false });
    off.put(id, data);
    expect(off.get(id)).toBeUndefined();
  });
});
