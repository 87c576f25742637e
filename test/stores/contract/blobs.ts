/** Store contract: {@link BlobStore} (see implementation.ts). */
import { describe, expect, it } from "vitest";
import { blobIdOf, toHex } from "../../../src/stores/blob-id.js";
import type { BlobStore } from "../../../src/stores/types.js";
import type { Implementation } from "./implementation.js";

/** Cases of {@link BlobStore} (seeded with hex id → bytes). */
export function blobStoreContract(impl: Implementation<BlobStore, { initial?: Map<string, Uint8Array> }>): void {
  describe(`BlobStore contract: ${impl.name}`, () => {
    const bytes = (text: string) => new TextEncoder().encode(text);

    it("put stores under the SHA-256 of the bytes and returns that id", async () => {
      const store = await impl.open({});
      const data = bytes("a blob");
      const id = store.put(data);
      expect(id).toEqual(blobIdOf(data));
      expect(store.has(id)).toBe(true);
      expect(store.get(id)).toEqual(data);
      expect(store.size).toBe(1);
    });

    it("the same bytes put twice are held once", async () => {
      const store = await impl.open({});
      store.put(bytes("twice"));
      store.put(bytes("twice"));
      expect(store.size).toBe(1);
    });

    it("set keeps the server's id as it is, whatever the bytes hash to", async () => {
      const store = await impl.open({});
      const id = new Uint8Array(32).fill(9);
      store.set(id, bytes("server blob"));
      expect(store.get(id)).toEqual(bytes("server blob"));
      expect(store.has(blobIdOf(bytes("server blob")))).toBe(false);
      expect(store.get(new Uint8Array(32))).toBeUndefined();
    });

    it("starts from the blobs it is given; a snapshot is a copy keyed by hex id", async () => {
      const seeded = bytes("seeded");
      const store = await impl.open({ initial: new Map([[toHex(blobIdOf(seeded)), seeded]]) });
      expect(store.get(blobIdOf(seeded))).toEqual(seeded);
      const snapshot = store.snapshot();
      store.put(bytes("later"));
      expect([...snapshot.keys()]).toEqual([toHex(blobIdOf(seeded))]);
      expect(store.size).toBe(2);
    });
  });
}
