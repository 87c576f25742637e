/** Store contract: {@link ConversationStore} and {@link ConversationIndex} (see implementation.ts). */
import { describe, expect, it } from "vitest";
import { blobIdOf, toHex } from "../../../src/stores/blob-id.js";
import type { ConversationIndex, ConversationStore, ConversationStoreOptions } from "../../../src/stores/types.js";
import { ORPHAN_BLOB, sampleRecord } from "../../support/conversation-record.js";
import type { Implementation } from "./implementation.js";

const T0 = 1_000_000_000;

/** Cases of {@link ConversationStore}. */
export function conversationStoreContract(impl: Implementation<ConversationStore, ConversationStoreOptions>): void {
  describe(`ConversationStore contract: ${impl.name}`, () => {
    it("load of an unknown conversation is undefined; deleting one is a no-op", async () => {
      const store = await impl.open({ now: () => T0 });
      expect(await store.load("nobody")).toBeUndefined();
      await store.delete("nobody");
      expect(await store.load("nobody")).toBeUndefined();
    });

    it("round-trips a record: checkpoint, covered messages, fingerprint, save time and blob bytes", async () => {
      const store = await impl.open({ now: () => T0 });
      const record = sampleRecord("conv-1", T0);
      await store.save(record);
      const loaded = await store.load("conv-1");
      expect(loaded?.conversationId).toBe("conv-1");
      expect(loaded?.checkpoint).toEqual(record.checkpoint);
      expect(loaded?.coveredMessages).toBe(2);
      expect(loaded?.fingerprint).toBe("f");
      expect(loaded?.updatedAt).toBe(T0);
      for (const [id, data] of loaded?.blobs ?? []) expect(data).toEqual(record.blobs.get(id));
    });

    it("keeps only the blobs the checkpoint reaches", async () => {
      const store = await impl.open({ now: () => T0 });
      await store.save(sampleRecord("conv-1", T0));
      const loaded = await store.load("conv-1");
      // The root prompt, the turn and the user message the turn references; never the orphan.
      expect(loaded?.blobs.size).toBe(3);
      expect(loaded?.blobs.has(toHex(blobIdOf(ORPHAN_BLOB)))).toBe(false);
    });

    it("a later save replaces the record", async () => {
      const store = await impl.open({ now: () => T0 + 1 });
      await store.save(sampleRecord("conv-1", T0));
      const next = { ...sampleRecord("conv-1", T0 + 1, "second"), coveredMessages: 4, fingerprint: "g" };
      await store.save(next);
      const loaded = await store.load("conv-1");
      expect(loaded).toMatchObject({ coveredMessages: 4, fingerprint: "g", updatedAt: T0 + 1 });
      expect(loaded?.checkpoint).toEqual(next.checkpoint);
      expect([...(loaded?.blobs.keys() ?? [])].sort()).toEqual(
        [...next.blobs.keys()].filter((id) => id !== toHex(blobIdOf(ORPHAN_BLOB))).sort(),
      );
    });

    it("delete removes one conversation and leaves the others", async () => {
      const store = await impl.open({ now: () => T0 });
      await store.save(sampleRecord("conv-1", T0));
      await store.save(sampleRecord("conv-2", T0, "other"));
      await store.delete("conv-1");
      expect(await store.load("conv-1")).toBeUndefined();
      expect((await store.load("conv-2"))?.conversationId).toBe("conv-2");
    });

    it("a record expires ttlMs after its save: load misses it and deleteExpired counts it", async () => {
      let now = T0;
      const store = await impl.open({ ttlMs: 10_000, now: () => now });
      await store.save(sampleRecord("old", T0));
      await store.save(sampleRecord("new", T0 + 5_000, "new"));
      now = T0 + 10_001;
      expect(await store.deleteExpired()).toBe(1);
      expect(await store.load("old")).toBeUndefined();
      expect((await store.load("new"))?.conversationId).toBe("new");
      now = T0 + 15_001;
      expect(await store.load("new")).toBeUndefined();
    });

    it("beyond maxEntries the oldest records go, by the next deleteExpired at the latest", async () => {
      let now = T0;
      const store = await impl.open({ maxEntries: 2, now: () => now });
      for (const [i, id] of ["a", "b", "c"].entries()) {
        now = T0 + i * 1_000;
        await store.save(sampleRecord(id, now, id));
      }
      await store.deleteExpired();
      expect(await store.load("a")).toBeUndefined();
      expect((await store.load("b"))?.conversationId).toBe("b");
      expect((await store.load("c"))?.conversationId).toBe("c");
    });

    it("concurrent saves of one conversation leave one whole record", async () => {
      const store = await impl.open({ now: () => T0 });
      const base = sampleRecord("conv-1", T0);
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.save({ ...base, coveredMessages: i })));
      const loaded = await store.load("conv-1");
      expect(loaded?.coveredMessages).toBeGreaterThanOrEqual(0);
      expect(loaded?.coveredMessages).toBeLessThan(20);
      expect(loaded?.checkpoint).toEqual(base.checkpoint);
      expect(loaded?.blobs.size).toBe(3);
    });

    it("concurrent saves of different conversations all land", async () => {
      const store = await impl.open({ now: () => T0 });
      const ids = Array.from({ length: 20 }, (_, i) => `conv-${i}`);
      await Promise.all(ids.map((id) => store.save(sampleRecord(id, T0, id))));
      const loaded = await Promise.all(ids.map((id) => store.load(id)));
      expect(loaded.map((record) => record?.conversationId)).toEqual(ids);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage loads what was saved", async () => {
        const store = await impl.open({ now: () => T0 });
        await store.save(sampleRecord("conv-1", T0));
        const again = await reopen({ now: () => T0 });
        expect((await again.load("conv-1"))?.blobs.size).toBe(3);
      });
    }
  });
}

/** Cases of {@link ConversationIndex}. */
export function conversationIndexContract(impl: Implementation<ConversationIndex>): void {
  describe(`ConversationIndex contract: ${impl.name}`, () => {
    it("lookup of an unknown key is undefined", async () => {
      const index = await impl.open({});
      expect(await index.lookup("unknown")).toBeUndefined();
      await index.close();
    });

    it("remembers keys; the last remember of a key wins", async () => {
      const index = await impl.open({});
      await index.remember("k1", "c1");
      await index.remember("k2", "c2");
      await index.remember("k1", "c3");
      expect(await index.lookup("k1")).toBe("c3");
      expect(await index.lookup("k2")).toBe("c2");
      await index.close();
    });

    it("concurrent remembers all land", async () => {
      const index = await impl.open({});
      const keys = Array.from({ length: 100 }, (_, i) => `key-${i}`);
      await Promise.all(keys.map((key, i) => index.remember(key, `conv-${i}`)));
      expect(await Promise.all(keys.map((key) => index.lookup(key)))).toEqual(keys.map((_, i) => `conv-${i}`));
      expect(index.size()).toBeGreaterThanOrEqual(0);
      await index.close();
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: close flushes remembers still on their way; another instance finds them", async () => {
        const index = await impl.open({});
        const pending = index.remember("k", "c");
        await index.close();
        await pending;
        const again = await reopen({});
        expect(await again.lookup("k")).toBe("c");
        await again.close();
      });
    }
  });
}
