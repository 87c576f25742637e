/** Store contract: {@link AccountStore}, several named Cursor logins side by side, one of them the default. */
import { describe, expect, it } from "vitest";
import {
  type AccountStore,
  type CredentialStore,
  type CredentialsInput,
  DEFAULT_ACCOUNT,
} from "../../../src/stores/types.js";
import { ProxyError } from "../../../src/util/errors.js";
import type { CredentialOptions } from "./credentials.js";
import type { Implementation } from "./implementation.js";

const SAVED_AT = new Date("2026-01-02T03:04:05.000Z");
const login = (who: string): CredentialsInput => ({
  accessToken: `access-${who}`,
  refreshToken: `refresh-${who}`,
  source: "login",
  email: `${who}@example.com`,
  userId: `user_${who}`,
});

/**
 * Cases of {@link AccountStore}. `legacy` is the single credential store every cursor-bridge had before accounts
 * had names, on the same storage as the last `open`: what it holds must be the default account.
 */
export function accountStoreContract(
  impl: Implementation<AccountStore, CredentialOptions> & {
    legacy?: (options: CredentialOptions) => Promise<CredentialStore>;
  },
): void {
  describe(`AccountStore contract: ${impl.name}`, () => {
    const open = () => impl.open({ now: () => SAVED_AT });

    it("holds nothing at first, and the default account is `default`", async () => {
      const store = await open();
      expect(await store.list()).toEqual([]);
      expect(await store.defaultAccount()).toBe(DEFAULT_ACCOUNT);
      expect(await store.credentials("alice").load()).toBeUndefined();
    });

    it("keeps several logins side by side, each its own record, listed by name without tokens", async () => {
      const store = await open();
      await store.credentials("bob").save(login("bob"));
      await store.credentials("alice").save(login("alice"));
      await store.credentials(DEFAULT_ACCOUNT).save(login("main"));
      expect((await store.credentials("alice").load())?.accessToken).toBe("access-alice");
      expect((await store.credentials("bob").load())?.accessToken).toBe("access-bob");
      expect((await store.credentials(DEFAULT_ACCOUNT).load())?.accessToken).toBe("access-main");
      const listed = await store.list();
      expect(listed.map((entry) => entry.name)).toEqual(["alice", "bob", "default"]);
      expect(listed[0]).toEqual({
        name: "alice",
        email: "alice@example.com",
        userId: "user_alice",
        source: "login",
        savedAt: SAVED_AT.toISOString(),
      });
      expect(JSON.stringify(listed)).not.toContain("access-");
    });

    it("clearing one account leaves the others (and drops it from the list)", async () => {
      const store = await open();
      await store.credentials("alice").save(login("alice"));
      await store.credentials("bob").save(login("bob"));
      expect(await store.credentials("alice").clear()).toBe(true);
      expect(await store.credentials("alice").clear()).toBe(false);
      expect((await store.list()).map((entry) => entry.name)).toEqual(["bob"]);
      expect((await store.credentials("bob").load())?.accessToken).toBe("access-bob");
    });

    it("the default account can be another one, and back", async () => {
      const store = await open();
      await store.setDefaultAccount("alice");
      expect(await store.defaultAccount()).toBe("alice");
      await store.setDefaultAccount(DEFAULT_ACCOUNT);
      expect(await store.defaultAccount()).toBe(DEFAULT_ACCOUNT);
    });

    it("refuses names that are not account names (invalid_request naming the field), storing nothing", async () => {
      const store = await open();
      for (const name of ["", "Alice", "../etc", "a/b", ".hidden", "a b", "x".repeat(65), "ä"]) {
        const error = (() => {
          try {
            store.credentials(name);
            return undefined;
          } catch (caught) {
            return caught;
          }
        })() as ProxyError;
        expect(error, name).toBeInstanceOf(ProxyError);
        expect(error.code).toBe("invalid_request");
        expect(error.param).toBe("account");
        await expect(store.setDefaultAccount(name)).rejects.toMatchObject({ code: "invalid_request" });
      }
      expect(await store.list()).toEqual([]);
      expect(await store.defaultAccount()).toBe(DEFAULT_ACCOUNT);
    });

    if (impl.legacy !== undefined) {
      const legacy = impl.legacy.bind(impl);
      it("the record kept before accounts had names is the account `default`, both ways", async () => {
        const store = await open();
        const before = await legacy({ now: () => SAVED_AT });
        await before.save(login("old"));
        expect((await store.credentials(DEFAULT_ACCOUNT).load())?.accessToken).toBe("access-old");
        expect((await store.list()).map((entry) => entry.name)).toEqual(["default"]);
        await store.credentials("alice").save(login("alice"));
        await store.credentials(DEFAULT_ACCOUNT).save(login("new"));
        expect((await before.load())?.accessToken).toBe("access-new");
      });
    }

    if (impl.reopen !== undefined) {
      const reopen = impl.reopen.bind(impl);
      it("durable: another instance on the same storage sees the accounts and the default", async () => {
        const store = await open();
        await store.credentials("alice").save(login("alice"));
        await store.setDefaultAccount("alice");
        const again = await reopen({ now: () => SAVED_AT });
        expect((await again.list()).map((entry) => entry.name)).toEqual(["alice"]);
        expect(await again.defaultAccount()).toBe("alice");
        expect((await again.credentials("alice").load())?.accessToken).toBe("access-alice");
      });
    }
  });
}
