/** The in-memory {@link AccountStore}: one memory credential store per account (tests and the test stack). */
import { accountEntry, checkAccountName } from "../accounts.js";
import { type AccountStore, type CredentialStore, DEFAULT_ACCOUNT, type StoredCredentials } from "../types.js";
import { createMemoryCredentialStore } from "./credential-store.js";

/** Creates the store, optionally holding `initial` records by account name. */
export function createMemoryAccountStore(
  initial: Readonly<Record<string, StoredCredentials>> = {},
  now: () => Date = () => new Date(),
): AccountStore {
  const stores = new Map<string, CredentialStore>();
  let chosen = DEFAULT_ACCOUNT;
  const storeOf = (name: string): CredentialStore => {
    checkAccountName(name);
    let store = stores.get(name);
    if (store === undefined) {
      store = createMemoryCredentialStore(initial[name], now);
      stores.set(name, store);
    }
    return store;
  };
  for (const name of Object.keys(initial)) storeOf(name);
  return {
    location: "memory",
    credentials: storeOf,
    async list() {
      const names = [...stores.keys()].sort();
      const entries = await Promise.all(
        names.map(async (name) => {
          const record = await stores.get(name)?.load();
          return record === undefined ? undefined : accountEntry(name, record);
        }),
      );
      return entries.filter((entry) => entry !== undefined);
    },
    async defaultAccount() {
      return chosen;
    },
    async setDefaultAccount(account) {
      chosen = checkAccountName(account);
    },
  };
}
