/**
 * The store contract: what each interface of src/stores/types.ts promises, as one set of cases that every
 * implementation runs (memory, file, Redis), the way connect-es runs one conformance suite against every transport.
 * An implementation joins by adding one line to contract.test.ts. Cases marked "durable" run for implementations
 * whose data outlives the instance (file, Redis): `reopen` opens a second instance on the storage of the last `open`.
 *
 * What stays in an implementation's own tests is what only it does: file modes and atomic renames, the file sweep's
 * logging and size cap, Redis key expiry and blob sharing, the memory index's LRU.
 */
import { describe, expect, it } from "vitest";
import { blobIdOf, toHex } from "../../src/stores/blob-id.js";
import type {
  BlobStore,
  ConversationIndex,
  ConversationStore,
  ConversationStoreOptions,
  CredentialStore,
  CredentialsInput,
  ResponseStore,
  ResponseStoreOptions,
  StoredResponse,
  StoreLock,
} from "../../src/stores/types.js";
import { ProxyError } from "../../src/util/errors.js";
import { ORPHAN_BLOB, sampleRecord } from "../support/conversation-record.js";

/** One implementation of a store interface under test. */
export interface Implementation<S, O = Record<string, never>> {
  name: string;
  /** A new, empty store (its own directory or key namespace). */
  open(options: O): Promise<S>;
  /** Durable implementations: another instance on the storage of the last `open` (a restart, or a second instance). */
  reopen?(options: O): Promise<S>;
}

const DAY = 24 * 60 * 60 * 1000;
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

/** Options every credential store takes. */
export interface CredentialOptions {
  now: () => Date;
}

const credentials: CredentialsInput = {
  accessToken: "access-secret-1",
  refreshToken: "refresh-secret-1",
  source: "login",
  email: "a@example.com",
  userId: "user_1",
};
const SAVED_AT = new Date("2026-01-02T03:04:05.000Z");

/** Cases of {@link CredentialStore}. */
export function credentialStoreContract(impl: Implementation<CredentialStore, CredentialOptions>): void {
  describe(`CredentialStore contract: ${impl.name}`, () => {
    const open = () => impl.open({ now: () => SAVED_AT });

    it("holds nothing at first: load is undefined and clear reports false", async () => {
      const store = await open();
      expect(await store.load()).toBeUndefined();
      expect(await store.clear()).toBe(false);
    });

    it("save returns the versioned record stamped with the save time; load returns the same", async () => {
      const store = await open();
      const saved = await store.save({ ...credentials, apiKey: undefined });
      expect(saved).toEqual({ ...credentials, version: 1, savedAt: SAVED_AT.toISOString() });
      expect(await store.load()).toEqual(saved);
    });

    it("a later save replaces the record; clear removes it (true, then false)", async () => {
      const store = await open();
      await store.save(credentials);
      await store.save({ ...credentials, accessToken: "access-2", source: "api-key", apiKey: "key_123456789" });
      expect(await store.load()).toMatchObject({ accessToken: "access-2", source: "api-key", apiKey: "key_123456789" });
      expect(await store.clear()).toBe(true);
      expect(await store.load()).toBeUndefined();
      expect(await store.clear()).toBe(false);
    });

    it("refuses incomplete credentials (invalid_request naming the field) and keeps what is stored", async () => {
      const store = await open();
      await store.save(credentials);
      const error = (await store.save({ ...credentials, refreshToken: "" }).catch((e: unknown) => e)) as ProxyError;
      expect(error).toBeInstanceOf(ProxyError);
      expect(error.code).toBe("invalid_request");
      expect(error.message).toContain("refreshToken");
      expect((await store.load())?.refreshToken).toBe(credentials.refreshToken);
    });

    it("concurrent saves leave one whole record", async () => {
      const store = await open();
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.save({ ...credentials, accessToken: `access-${i}`, refreshToken: `r-${i}` }),
        ),
      );
      const loaded = await store.load();
      expect(loaded?.accessToken).toMatch(/^access-\d$/);
      expect(loaded?.refreshToken).toBe(`r-${loaded?.accessToken.slice("access-".length)}`);
    });

    it("its location is printable and names no token", async () => {
      const store = await open();
      await store.save(credentials);
      expect(store.location.length).toBeGreaterThan(0);
      expect(store.location).not.toContain(credentials.accessToken);
      expect(store.location).not.toContain(credentials.refreshToken);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage loads what was saved", async () => {
        const store = await open();
        const saved = await store.save(credentials);
        expect(await (await reopen({ now: () => SAVED_AT })).load()).toEqual(saved);
      });
    }
  });
}

/** A lock under test: `holder()` is the lock as another participant (another instance, for a shared lock) sees it. */
export interface LockParticipants {
  holder(): StoreLock;
}

/** Cases of {@link StoreLock}. */
export function lockContract(impl: Implementation<LockParticipants>): void {
  describe(`StoreLock contract: ${impl.name}`, () => {
    it("resolves with what the work returns and rejects with what it throws", async () => {
      const lock = (await impl.open({})).holder();
      expect(await lock(async () => 42)).toBe(42);
      const thrown = new Error("work failed");
      await expect(
        lock(async () => {
          throw thrown;
        }),
      ).rejects.toBe(thrown);
    });

    it("one holder at a time, across participants", async () => {
      const participants = await impl.open({});
      let active = 0;
      let most = 0;
      const done: number[] = [];
      await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          participants.holder()(async () => {
            active += 1;
            most = Math.max(most, active);
            await new Promise((resolve) => setTimeout(resolve, 10));
            active -= 1;
            done.push(i);
          }),
        ),
      );
      expect(most).toBe(1);
      expect(done.sort()).toEqual([0, 1, 2, 3, 4]);
    });

    it("work that throws releases the lock for the next holder", async () => {
      const participants = await impl.open({});
      await participants
        .holder()(async () => {
          throw new Error("first holder failed");
        })
        .catch(() => undefined);
      expect(await participants.holder()(async () => "second")).toBe("second");
    });
  });
}

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
