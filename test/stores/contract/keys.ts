/** Store contract: {@link KeyStore} (virtual keys) and {@link AuditLog} (see implementation.ts). */
import { describe, expect, it } from "vitest";
import type { AuditEntry, AuditLog, KeyStore, VirtualKeyRecord } from "../../../src/stores/types.js";
import { ProxyError } from "../../../src/util/errors.js";
import type { Implementation } from "./implementation.js";

function record(id: string, name: string, extra: Partial<VirtualKeyRecord> = {}): VirtualKeyRecord {
  return {
    id,
    name,
    hash: `${id}-hash`.padEnd(64, "0"),
    prefix: "cbk-abcdef",
    createdAt: `2026-01-0${id.length % 9}T00:00:00.000Z`,
    limits: {},
    ...extra,
  };
}

async function refusal(work: Promise<unknown>): Promise<ProxyError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProxyError);
  return error as ProxyError;
}

/** Cases of {@link KeyStore}. */
export function keyStoreContract(impl: Implementation<KeyStore>): void {
  describe(`KeyStore contract: ${impl.name}`, () => {
    it("holds nothing at first; a created record lists as it was given, every field kept", async () => {
      const store = await impl.open({});
      expect(await store.list()).toEqual([]);
      const full = record("key_1", "alice", {
        createdAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2026-02-01T00:00:00.000Z",
        models: ["gpt-5*", "claude-4.5-sonnet"],
        account: "team",
        limits: { rpm: 60, tpm: 100_000, maxParallel: 2, budget: { usd: 10, period: "month" } },
      });
      await store.create(full);
      await store.create(record("key_22", "bob", { createdAt: "2026-01-02T00:00:00.000Z" }));
      expect(await store.list()).toEqual([full, record("key_22", "bob", { createdAt: "2026-01-02T00:00:00.000Z" })]);
    });

    it("refuses a second live key with the same name (409 already_exists naming it), and a reused id", async () => {
      const store = await impl.open({});
      await store.create(record("key_1", "alice"));
      const byName = await refusal(store.create(record("key_2", "alice")));
      expect(byName.code).toBe("invalid_request");
      expect(byName.detail).toBe("already_exists");
      expect(byName.status).toBe(409);
      expect(byName.message).toContain('"alice"');
      expect((await refusal(store.create(record("key_1", "carol")))).detail).toBe("already_exists");
      expect((await store.list()).map((r) => r.id)).toEqual(["key_1"]);
    });

    it("concurrent creates of one name: exactly one wins", async () => {
      const store = await impl.open({});
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => store.create(record(`key_${i}`, "same"))),
      );
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await store.list()).toHaveLength(1);
    });

    it("update applies a rotation or a revocation and returns the record; a revoked name is free again", async () => {
      const store = await impl.open({});
      await store.create(record("key_1", "alice"));
      const rotated = await store.update("key_1", {
        hash: "f".repeat(64),
        prefix: "cbk-zzzzzz",
        rotatedAt: "2026-03-01T00:00:00.000Z",
      });
      expect(rotated).toMatchObject({ id: "key_1", name: "alice", hash: "f".repeat(64), prefix: "cbk-zzzzzz" });
      const revoked = await store.update("key_1", { revokedAt: "2026-03-02T00:00:00.000Z" });
      expect(revoked.revokedAt).toBe("2026-03-02T00:00:00.000Z");
      expect(revoked.hash).toBe("f".repeat(64));
      await store.create(record("key_2", "alice"));
      expect((await store.list()).map((r) => [r.id, r.revokedAt !== undefined])).toEqual([
        ["key_1", true],
        ["key_2", false],
      ]);
    });

    it("update of an unknown id is not_found", async () => {
      const store = await impl.open({});
      expect((await refusal(store.update("key_missing", { revokedAt: "x" }))).code).toBe("not_found");
    });

    it("version changes with every write and stays put without one", async () => {
      const store = await impl.open({});
      const seen = [await store.version()];
      expect(await store.version()).toBe(seen[0]);
      await store.create(record("key_1", "alice"));
      seen.push(await store.version());
      await store.update("key_1", { hash: "e".repeat(64) });
      seen.push(await store.version());
      await store.update("key_1", { revokedAt: "2026-03-02T00:00:00.000Z" });
      seen.push(await store.version());
      expect(new Set(seen).size).toBe(4);
      expect(await store.version()).toBe(seen[3]);
    });

    it("its location is printable and names no key hash", async () => {
      const store = await impl.open({});
      await store.create(record("key_1", "alice"));
      expect(store.location.length).toBeGreaterThan(0);
      expect(store.location).not.toContain("key_1-hash");
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage lists the records and sees the changes' versions", async () => {
        const store = await impl.open({});
        await store.create(record("key_1", "alice"));
        const other = await reopen({});
        expect(await other.list()).toEqual(await store.list());
        const before = await other.version();
        await store.update("key_1", { revokedAt: "2026-03-02T00:00:00.000Z" });
        expect(await other.version()).not.toBe(before);
        expect((await other.list())[0]?.revokedAt).toBe("2026-03-02T00:00:00.000Z");
      });
    }
  });
}

const entry = (i: number): AuditEntry => ({
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  actor: "cli:ops",
  action: i % 2 === 0 ? "key.create" : "key.revoke",
  target: `key-${i}`,
  from: "cli",
  detail: { n: i, nested: { ok: true } },
});

/** Cases of {@link AuditLog}. */
export function auditLogContract(impl: Implementation<AuditLog>): void {
  describe(`AuditLog contract: ${impl.name}`, () => {
    it("holds nothing at first; appended entries read back oldest first, unchanged", async () => {
      const log = await impl.open({});
      expect(await log.read()).toEqual([]);
      for (const i of [0, 1, 2]) await log.append(entry(i));
      expect(await log.read()).toEqual([entry(0), entry(1), entry(2)]);
    });

    it("limit keeps the newest that many, still oldest first; limit 0 reads nothing", async () => {
      const log = await impl.open({});
      for (const i of [0, 1, 2, 3, 4]) await log.append(entry(i));
      expect(await log.read({ limit: 2 })).toEqual([entry(3), entry(4)]);
      expect(await log.read({ limit: 10 })).toHaveLength(5);
      expect(await log.read({ limit: 0 })).toEqual([]);
    });

    it("concurrent appends all arrive, each whole", async () => {
      const log = await impl.open({});
      await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(entry(i))));
      const read = await log.read();
      expect(read).toHaveLength(20);
      expect(new Set(read.map((e) => e.target)).size).toBe(20);
    });

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage reads what was appended, and appends after it", async () => {
        const log = await impl.open({});
        await log.append(entry(0));
        const other = await reopen({});
        await other.append(entry(1));
        expect(await log.read()).toEqual([entry(0), entry(1)]);
      });
    }
  });
}
