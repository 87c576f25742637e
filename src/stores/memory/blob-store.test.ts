import { describe, expect, it } from "vitest";
import { createBlobStore } from "./blob-store.js";

describe("blob store", () => {
  const id = new Uint8Array(32).fill(7);

  it("keeps a server blob that is most of its buffer without copying it", () => {
    const message = new Uint8Array(1_000);
    const blob = message.subarray(10);
    const store = createBlobStore();
    store.set(id, blob);
    expect(store.get(id)).toBe(blob);
  });

  it("copies a small view so it does not pin the rest of a large buffer", () => {
    const message = new Uint8Array(1_000).fill(3);
    const blob = message.subarray(10, 20);
    const store = createBlobStore();
    store.set(id, blob);
    const kept = store.get(id);
    expect(kept).toEqual(blob);
    expect(kept?.buffer).not.toBe(message.buffer);
    expect(kept?.buffer.byteLength).toBe(10);
  });
});
