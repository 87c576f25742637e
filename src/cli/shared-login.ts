/**
 * One Cursor login per account for every instance on a shared Redis store: the credentials live in Redis (encrypted
 * with a key derived from the cluster secret) and every refresh holds a Redis lock per account, so a refresh token
 * rotated by one instance is never spent again by another. The first instance seeds each account's shared login from
 * its own credential files (the default account also from `CURSOR_API_KEY`, exchanged once; the tokens are then
 * shared). `CURSOR_ACCESS_TOKEN` stays per instance. Named accounts (issue #29) are the union of those already
 * shared and those in this instance's config directory; which one is the default is this instance's setting.
 */
import { createRefreshingTokenSource, describeCredentials, loginWithApiKey } from "../auth/index.js";
import { deriveKey } from "../cluster/cluster-auth.js";
import { createRedisAccountStore } from "../stores/redis/account-store.js";
import type { StoreClient } from "../stores/redis/client.js";
import { createRedisLock } from "../stores/redis/lock.js";
import { type AccountEntry, type AccountStore, DEFAULT_ACCOUNT } from "../stores/types.js";
import type { Logger } from "../util/logger.js";
import type { CliContext, ResolvedCredentials } from "./context.js";

/** The context with credentials resolved from (and refreshed through) the shared store. */
export function withSharedLogin(ctx: CliContext, client: StoreClient, logger: Logger): CliContext {
  const { config } = ctx;
  const now = () => new Date(ctx.now());
  const shared = createRedisAccountStore(client, deriveKey(config.clusterSecret ?? "", "credentials at rest"), now);
  // The union of the shared accounts and this instance's, the default being this instance's choice.
  const accounts: AccountStore = {
    location: shared.location,
    credentials: (account) => shared.credentials(account),
    async list() {
      const byName = new Map<string, AccountEntry>();
      for (const entry of await ctx.accounts.list()) byName.set(entry.name, entry);
      for (const entry of await shared.list()) byName.set(entry.name, entry);
      return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
    },
    defaultAccount: () => ctx.accounts.defaultAccount(),
    setDefaultAccount: (account) => ctx.accounts.setDefaultAccount(account),
  };
  const sharedFor = (local: CliContext): CliContext => {
    const account = local.account;
    const store = shared.credentials(account);
    const lock = createRedisLock(client, account === DEFAULT_ACCOUNT ? "credentials" : `credentials:${account}`);
    const environment = account === ctx.account;
    const seed = () =>
      lock(async () => {
        const again = await store.load();
        if (again !== undefined) return again;
        const mine = await local.store.load();
        if (mine !== undefined) {
          const { version: _version, savedAt: _savedAt, ...input } = mine;
          logger.info("sharing this instance's Cursor login with the other instances", {
            from: local.store.location,
            ...(account === DEFAULT_ACCOUNT ? {} : { account }),
          });
          return store.save(input);
        }
        if (!environment || config.cursorApiKey === undefined) return undefined;
        await loginWithApiKey(config.cursorApiKey, { store, apiUrl: config.cursorApiUrl });
        logger.info("exchanged CURSOR_API_KEY; the tokens are shared with the other instances");
        return store.load();
      });
    const resolveCredentials = async (): Promise<ResolvedCredentials | undefined> => {
      if (environment && config.cursorAccessToken !== undefined) return local.resolveCredentials();
      const stored = (await store.load()) ?? (await seed());
      if (stored === undefined) return undefined;
      const tokenSource = createRefreshingTokenSource({
        store,
        apiUrl: config.cursorApiUrl,
        now: ctx.now,
        refreshLock: lock,
        logger: logger.child(account === DEFAULT_ACCOUNT ? { component: "auth" } : { component: "auth", account }),
      });
      return { origin: "store", tokenSource, status: describeCredentials(stored, store.location, ctx.now()) };
    };
    return {
      ...local,
      accounts,
      resolveCredentials,
      forAccount: (name) => sharedFor(local.forAccount(name)),
    };
  };
  return sharedFor(ctx);
}
