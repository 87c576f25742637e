/** Store contract: {@link CredentialStore} and the {@link StoreLock} that makes refreshing it single-flight. */
import { describe, expect, it } from "vitest";
import type { CredentialStore, CredentialsInput, StoreLock } from "../../../src/stores/types.js";
import { ProxyError } from "../../../src/util/errors.js";
import type { Implementation } from "./implementation.js";

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
