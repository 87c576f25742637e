/** Store contract: {@link ResponseStore} (see implementation.ts). */
import { describe, expect, it } from "vitest";
import type { ResponseStore, ResponseStoreOptions, StoredResponse } from "../../../src/stores/types.js";
import type { Implementation } from "./implementation.js";

const DAY = 24 * 60 * 60 * 1000;

function response(id: string, storedAt: number): StoredResponse {
  return {
    id,
    response: { id, object: "response", output: [{ type: "message", content: [{ type: "output_text", text: id }] }] },
    input: [{ type: "message", role: "user", content: "hi" }],
    storedAt,
  };
}

/** Cases of {@link ResponseStore}. */
export function responseStoreContract(impl: Implementation<ResponseStore, ResponseStoreOptions>): void {
  describe(`ResponseStore contract: ${impl.name}`, () => {
    it("puts, gets, deletes; unknown ids are undefined / false", async () => {
      const store = await impl.open({ now: () => 1000 });
      await store.put(response("resp_a", 1000));
      expect(await store.get("resp_a")).toEqual(response("resp_a", 1000));
      expect(await store.get("resp_b")).toBeUndefined();
      expect(await store.delete("resp_a")).toBe(true);
      expect(await store.delete("resp_a")).toBe(false);
      expect(await store.get("resp_a")).toBeUndefined();
    });

    it("a put of an existing id replaces it", async () => {
      const store = await impl.open({ now: () => 1000 });
      await store.put(response("resp_a", 900));
      await store.put({ ...response("resp_a", 1000), input: [{ n: 2 }] });
      expect(await store.get("resp_a")).toMatchObject({ storedAt: 1000, input: [{ n: 2 }] });
    });

    it("records are copies: changing what was put or read back changes nothing stored", async () => {
      const store = await impl.open({ now: () => 1000 });
      const record = response("resp_a", 1000);
      await store.put(record);
      record.input.push("changed after put");
      const read = await store.get("resp_a");
      read?.input.push("changed after get");
      expect(await store.get("resp_a")).toEqual(response("resp_a", 1000));
    });

    it("expires records after the TTL (7 days by default); deleteExpired counts them", async () => {
      let now = 0;
      const store = await impl.open({ now: () => now });
      await store.put(response("resp_old", 0));
      await store.put(response("resp_new", 6 * DAY));
      now = 7 * DAY + 1;
      expect(await store.deleteExpired()).toBe(1);
      expect(await store.get("resp_old")).toBeUndefined();
      expect(await store.get("resp_new")).toBeDefined();
      now = 14 * DAY;
      expect(await store.get("resp_new")).toBeUndefined();
    });

    it("keeps at most maxEntries records, dropping the oldest", async () => {
      const store = await impl.open({ maxEntries: 2, now: () => 0 });
      await store.put(response("resp_1", 0));
      await store.put(response("resp_2", 0));
      await store.put(response("resp_3", 0));
      const present = await Promise.all(
        ["resp_1", "resp_2", "resp_3"].map(async (id) => (await store.get(id)) !== undefined),
      );
      expect(present.filter(Boolean)).toHaveLength(2);
      expect(await store.get("resp_3")).toBeDefined();
    });

    it("concurrent puts of different ids all land", async () => {
      const store = await impl.open({ now: () => 1000 });
      const ids = Array.from({ length: 10 }, (_, i) => `resp_${i}`);
      await Promise.all(ids.map((id) => store.put(response(id, 1000))));
      const read = await Promise.all(ids.map((id) => store.get(id)));
      expect(read.map((record) => record?.id)).toEqual(ids);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage gets what was put", async () => {
        const store = await impl.open({ now: () => 1000 });
        await store.put(response("resp_a", 1000));
        expect(await (await reopen({ now: () => 1000 })).get("resp_a")).toEqual(response("resp_a", 1000));
      });
    }
  });
}
