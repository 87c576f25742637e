/**
 * One Cursor login for every instance on a shared Redis store: the credentials live in Redis (encrypted with a key
 * derived from the cluster secret) and every refresh holds a Redis lock, so a refresh token rotated by one instance
 * is never spent again by another. The first instance seeds the shared login from its own credentials file or from
 * `CURSOR_API_KEY` (exchanged once; the tokens are then shared). `CURSOR_ACCESS_TOKEN` stays per instance.
 */
import { createRefreshingTokenSource, describeCredentials, loginWithApiKey } from "../auth/index.js";
import { deriveKey } from "../cluster/cluster-auth.js";
import type { StoreClient } from "../stores/redis/client.js";
import { createRedisCredentialStore } from "../stores/redis/credential-store.js";
import { createRedisLock } from "../stores/redis/lock.js";
import type { Logger } from "../util/logger.js";
import type { CliContext, ResolvedCredentials } from "./context.js";

/** The context with credentials resolved from (and refreshed through) the shared store. */
export function withSharedLogin(ctx: CliContext, client: StoreClient, logger: Logger): CliContext {
  const { config } = ctx;
  const shared = createRedisCredentialStore(client, deriveKey(config.clusterSecret ?? "", "credentials at rest"));
  const lock = createRedisLock(client, "credentials");
  const seed = () =>
    lock(async () => {
      const again = await shared.load();
      if (again !== undefined) return again;
      const local = await ctx.store.load();
      if (local !== undefined) {
        const { version: _version, savedAt: _savedAt, ...input } = local;
        logger.info("sharing this instance's Cursor login with the other instances", { from: ctx.store.location });
        return shared.save(input);
      }
      if (config.cursorApiKey === undefined) return undefined;
      await loginWithApiKey(config.cursorApiKey, { store: shared, apiUrl: config.cursorApiUrl });
      logger.info("exchanged CURSOR_API_KEY; the tokens are shared with the other instances");
      return shared.load();
    });
  const resolveCredentials = async (): Promise<ResolvedCredentials | undefined> => {
    if (config.cursorAccessToken !== undefined) return ctx.resolveCredentials();
    const stored = (await shared.load()) ?? (await seed());
    if (stored === undefined) return undefined;
    const tokenSource = createRefreshingTokenSource({
      store: shared,
      apiUrl: config.cursorApiUrl,
      now: ctx.now,
      refreshLock: lock,
      logger: logger.child({ component: "auth" }),
    });
    return { origin: "store", tokenSource, status: describeCredentials(stored, shared.location, ctx.now()) };
  };
  return { ...ctx, resolveCredentials };
}
