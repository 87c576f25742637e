import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryKeyStore } from "../../stores/memory/key-store.js";
import type { KeyStore } from "../../stores/types.js";
import { silentLogger } from "../../util/logger.js";
import { createKeyIndex } from "./key-index.js";
import { hashKey } from "./key-material.js";

const KEY = `cbk-${"x".repeat(43)}`;
const record = (id: string, name: string, key: string) => ({
  id,
  name,
  hash: hashKey(key),
  prefix: key.slice(0, 10),
  createdAt: "2026-01-01T00:00:00.000Z",
  limits: {},
});

afterEach(() => {
  vi.useRealTimers();
});

describe("the server's key index", () => {
  it("reports a record gone for good once, at the poll that sees it revoked or expired (not a rotation)", async () => {
    vi.useFakeTimers();
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const other = `cbk-${"y".repeat(43)}`;
    const third = `cbk-${"z".repeat(43)}`;
    const expiring = { ...record("key_2", "bob", other), expiresAt: "2026-01-01T00:00:01.000Z" };
    const store = createMemoryKeyStore([record("key_1", "alice", KEY), expiring, record("key_3", "carol", third)]);
    const index = await createKeyIndex({ store, logger: silentLogger, pollMs: 200, now: () => now });
    const gone: string[] = [];
    index.onRecordGone((gone_, why) => gone.push(`${gone_.id} ${why}`));
    await store.update("key_3", { hash: hashKey(`cbk-${"w".repeat(43)}`) });
    await vi.advanceTimersByTimeAsync(400);
    expect(gone).toEqual([]);
    now += 1000;
    await vi.advanceTimersByTimeAsync(200);
    await store.update("key_1", { revokedAt: "2026-01-01T00:00:01.000Z" });
    await vi.advanceTimersByTimeAsync(600);
    expect(gone).toEqual(["key_2 expired", "key_1 revoked"]);
    index.close();
  });

  it("reports an expired key given a later expiry again when it is revoked afterwards", async () => {
    vi.useFakeTimers();
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const store = createMemoryKeyStore([{ ...record("key_1", "alice", KEY), expiresAt: "2026-01-01T00:00:01.000Z" }]);
    const index = await createKeyIndex({ store, logger: silentLogger, pollMs: 200, now: () => now });
    const gone: string[] = [];
    index.onRecordGone((record_, why) => gone.push(`${record_.id} ${why}`));
    now += 1000;
    await vi.advanceTimersByTimeAsync(200);
    expect(gone).toEqual(["key_1 expired"]);
    await store.update("key_1", { expiresAt: "2026-02-01T00:00:00.000Z" });
    await vi.advanceTimersByTimeAsync(400);
    await store.update("key_1", { revokedAt: "2026-01-01T00:00:02.000Z" });
    await vi.advanceTimersByTimeAsync(400);
    expect(gone).toEqual(["key_1 expired", "key_1 revoked"]);
    index.close();
  });

  it("sees a revocation at the next poll (pollMs), without any request asking", async () => {
    vi.useFakeTimers();
    const store = createMemoryKeyStore([record("key_1", "alice", KEY)]);
    const index = await createKeyIndex({ store, logger: silentLogger, pollMs: 200 });
    expect((await index.lookup(KEY)).status).toBe("valid");
    await store.update("key_1", { revokedAt: "2026-01-02T00:00:00.000Z" });
    // A known key does not trigger a reload: until the poll, the index still has the old record.
    expect((await index.lookup(KEY)).status).toBe("valid");
    await vi.advanceTimersByTimeAsync(200);
    expect((await index.lookup(KEY)).status).toBe("revoked");
    index.close();
  });

  it("tells a request watching its key when it expires, is revoked or rotated; a stopped watch hears nothing", async () => {
    vi.useFakeTimers();
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const other = `cbk-${"y".repeat(43)}`;
    const expiring = { ...record("key_2", "bob", other), expiresAt: "2026-01-01T00:00:01.000Z" };
    const store = createMemoryKeyStore([record("key_1", "alice", KEY), expiring]);
    const index = await createKeyIndex({ store, logger: silentLogger, pollMs: 200, now: () => now });
    const heard: string[] = [];
    index.watch(expiring, (why) => heard.push(`bob ${why}`));
    const stop = index.watch(record("key_1", "alice", KEY), (why) => heard.push(`stopped ${why}`));
    index.watch(record("key_1", "alice", KEY), (why) => heard.push(`alice ${why}`));
    await vi.advanceTimersByTimeAsync(200);
    expect(heard).toEqual([]);
    now += 1000;
    stop();
    await vi.advanceTimersByTimeAsync(200);
    expect(heard).toEqual(["bob expired"]);
    await store.update("key_1", { revokedAt: "2026-01-01T00:00:02.000Z" });
    await vi.advanceTimersByTimeAsync(200);
    expect(heard).toEqual(["bob expired", "alice revoked"]);
    index.close();
  });

  it("an unknown key checks the store at once (a key just created works on first use)", async () => {
    const store = createMemoryKeyStore();
    const index = await createKeyIndex({ store, logger: silentLogger, pollMs: 60_000, minRecheckMs: 0 });
    expect(index.hasKeys()).toBe(false);
    await store.create(record("key_1", "alice", KEY));
    expect((await index.lookup(KEY)).status).toBe("valid");
    expect(index.hasKeys()).toBe(true);
    expect((await index.lookup(`${KEY}y`)).status).toBe("unknown");
    index.close();
  });

  it("expiry is judged at request time; revoked and expired records keep keys required", async () => {
    let now = Date.parse("2026-01-01T00:00:00.000Z");
    const store = createMemoryKeyStore([{ ...record("key_1", "alice", KEY), expiresAt: "2026-01-01T01:00:00.000Z" }]);
    const index = await createKeyIndex({ store, logger: silentLogger, now: () => now });
    expect((await index.lookup(KEY)).status).toBe("valid");
    now += 3_600_000;
    expect((await index.lookup(KEY)).status).toBe("expired");
    expect(index.hasKeys()).toBe(true);
    index.close();
  });

  it("keeps serving the keys read last while the store fails, and logs it once", async () => {
    vi.useFakeTimers();
    const inner = createMemoryKeyStore([record("key_1", "alice", KEY)]);
    let failing = false;
    const store: KeyStore = {
      ...inner,
      version: async () => {
        if (failing) throw new Error("store down");
        return inner.version();
      },
    };
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (message: string) => warnings.push(message) };
    const index = await createKeyIndex({ store, logger, pollMs: 100 });
    failing = true;
    await vi.advanceTimersByTimeAsync(500);
    expect((await index.lookup(KEY)).status).toBe("valid");
    expect(warnings).toHaveLength(1);
    index.close();
  });
});
