/**
 * The Redis {@link AccountStore}, shared by the instances on one store. Keys under the deployment's prefix: the
 * default account's record `credentials` (unchanged), each named account's `credentials:<name>` (both encrypted at
 * rest, see credential-store.ts), the set `accounts` of named accounts with a record, and `accounts:default`, the
 * name of the default account once another one was chosen.
 */
import { accountEntry, checkAccountName, isAccountName } from "../accounts.js";
import { type AccountEntry, type AccountStore, type CredentialStore, DEFAULT_ACCOUNT } from "../types.js";
import { type StoreClient, storeCall } from "./client.js";
import { accountSetKey, createRedisCredentialStore } from "./credential-store.js";

/** Creates the store; `key` is the AES key of the records (derived from the cluster secret). */
export function createRedisAccountStore(
  client: StoreClient,
  key: Buffer,
  now: () => Date = () => new Date(),
): AccountStore {
  const stores = new Map<string, CredentialStore>();
  const pointer = `${client.prefix}accounts:default`;
  const credentials = (account: string): CredentialStore => {
    checkAccountName(account);
    let store = stores.get(account);
    if (store === undefined) {
      store = createRedisCredentialStore(client, key, now, account);
      stores.set(account, store);
    }
    return store;
  };
  return {
    location: `${client.label} (encrypted, shared by the instances)`,
    credentials,
    async list() {
      const members = await storeCall(client, () => client.redis.smembers(accountSetKey(client)));
      const names = [DEFAULT_ACCOUNT, ...members.filter((name) => isAccountName(name) && name !== DEFAULT_ACCOUNT)];
      const entries: AccountEntry[] = [];
      for (const name of [...new Set(names)].sort()) {
        const record = await credentials(name).load();
        if (record !== undefined) entries.push(accountEntry(name, record));
      }
      return entries;
    },
    async defaultAccount() {
      const name = await storeCall(client, () => client.redis.get(pointer));
      return name !== null && isAccountName(name) ? name : DEFAULT_ACCOUNT;
    },
    async setDefaultAccount(account) {
      checkAccountName(account);
      await storeCall(client, () => client.redis.set(pointer, account));
    },
  };
}
