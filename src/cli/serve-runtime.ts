/**
 * The heavy half of `serve`, loaded once its port is bound and its banner printed (serve.ts): the stores, and the
 * bridge wired on them by server/app-wiring.ts (the test stack wires through the same factory), which then serves
 * the bound port, the requests held since the bind first. The upstream (the protocol code and, without credentials,
 * the embedded emulator on the port bound for it) is built right after: loading it takes longer than all the rest,
 * and only turns need it, so they wait for it (backend/deferred-client.ts) while `/health`, the status page and every
 * check answer at once.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { deferredAgentClient } from "../backend/deferred-client.js";
import { createGateway, type Gateway } from "../gateway/index.js";
import { createKeyUsageSource } from "../gateway/limits/index.js";
import { FIRST_VERSION_CHECK_DELAY_MS, VERSION_CHECK_INTERVAL_MS } from "../protocol/cursor/client-version-heal.js";
import { wireApp } from "../server/app-wiring.js";
import type { PendingServer } from "../server/listen.js";
import { requireJson } from "../server/request-guard.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { UpstreamKind } from "../surfaces/kit/deps.js";
import { bodyLimitForImages } from "../surfaces/kit/image-input.js";
import type { KeyUsageSource } from "../surfaces/kit/key-usage.js";
import type { Logger } from "../util/logger.js";
import { ShutdownNotice, shuttingDown } from "../util/shutdown-notice.js";
import type { CliContext } from "./context.js";
import { loginOf } from "./format.js";
import { openLimits } from "./limits-setup.js";
import { engineSettings, openGatewayStores, openStores, type ServeStores } from "./store-setup.js";
import { createUpstream, storedLoginIdentity, storedLoginWatch, type Upstream, upstreamDataDir } from "./upstream.js";
import type { UpstreamChoice } from "./upstream-choice.js";
import { planUsageOf } from "./usage.js";
import { packageVersion } from "./version.js";

/** Where other instances reach this one when `--instance-url` is not given. */
function defaultInstanceUrl(host: string, port: number): string {
  const name = ["0.0.0.0", "::", "[::]"].includes(host) ? hostname() : host;
  return `http://${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}:${port}`;
}

/** `n request(s)`. */
function requests(n: number): string {
  return `${n} request${n === 1 ? "" : "s"}`;
}

/**
 * Stops `server` gracefully (server/drain.ts), saying so in the log: the requests in flight get up to `drainMs`, then
 * the turns still running are given the shutdown notice (each ends with its door's shutting-down error).
 */
async function drainServer(server: PendingServer, notice: ShutdownNotice, drainMs: number, logger: Logger) {
  const seconds = `${Math.round(drainMs / 100) / 10} s`;
  await server.shutdown({
    timeoutMs: drainMs,
    onDrain: (inFlight) => {
      if (inFlight > 0) logger.info(`draining ${requests(inFlight)}, up to ${seconds}; new requests are refused`);
    },
    onTimeout: (inFlight) => {
      logger.warn(`drain time (${seconds}) is up: ending ${requests(inFlight)} with a shutting-down error`);
      notice.give(shuttingDown(true));
    },
  });
}

/** What serve.ts has settled before loading this module. */
export interface RuntimeInput {
  /** The context the upstream was chosen with (credentials from the shared store behind `--store redis://…`). */
  ctx: CliContext;
  logger: Logger;
  /** The shared store's connection (`--store redis://…`); closed with the stores. */
  shared: StoreClient | undefined;
  choice: UpstreamChoice;
  server: PendingServer;
}

/** The running API behind the bound port. */
export interface Runtime {
  upstream: ServedUpstream;
  /**
   * Resolves once the upstream is built (requests are served before: a turn waits for it); rejects when it cannot
   * be, and the server must then stop.
   */
  ready: Promise<void>;
  /**
   * Reads Cursor's server config with every account's login now, as serve does 10 s after the start and once a day
   * (the client version policy, each account's HTTP/2 hint); resolves when every read has ended. Never rejects.
   */
  readServerConfig(): Promise<void>;
  /** Virtual keys existed at start: every API request then needs one (or the configured API key). */
  virtualKeys: boolean;
  /**
   * Closes the server, the open turns, the stores and the upstream. With `drainMs`, gracefully (server/drain.ts):
   * new requests are refused at once, those in flight get up to `drainMs` to finish, then the turns still running end
   * with their door's shutting-down error; without, every connection is dropped at once.
   */
  close(drainMs?: number): Promise<void>;
}

/** What serve's app tells about its upstream (known before the upstream is built). */
export interface ServedUpstream {
  kind: UpstreamKind;
  /** Cursor credentials are present (false once `logout` removes the stored login). */
  readonly loggedIn: boolean;
  /** Who was logged in at the start (the banner's). */
  account: string | undefined;
  /** Who is logged in now: a new `login` while the server runs shows here (the status page's). */
  currentAccount: () => Promise<string | undefined>;
  agentUrl: string;
  /** The account requests without one run on (named accounts, issue #29). */
  defaultAccount: string;
  /**
   * The other named accounts served beside the default one: who was logged in to each at the start, and who is now;
   * empty for one login.
   */
  named: ReadonlyArray<{ name: string; who: string | undefined; current: () => Promise<string | undefined> }>;
}

/** The upstream as the app names it, from the choice alone (the emulator's URL is that of its bound port). */
function servedUpstream(input: RuntimeInput): ServedUpstream {
  const { ctx, logger, choice } = input;
  if (choice.kind === "cursor") {
    const { credentials } = choice;
    const loggedIn = storedLoginWatch(ctx, credentials, logger);
    return {
      kind: "cursor",
      get loggedIn() {
        return loggedIn();
      },
      account: loginOf(credentials.status),
      // Through the account store: on a shared Redis store that is the shared login, not this instance's file.
      currentAccount: storedLoginIdentity(ctx.accounts.credentials(ctx.account), credentials),
      agentUrl: ctx.config.cursorAgentUrl,
      defaultAccount: ctx.account,
      named: (choice.named ?? []).map((login) => ({
        name: login.name,
        who: loginOf(login.credentials.status),
        current: storedLoginIdentity(ctx.accounts.credentials(login.name), login.credentials),
      })),
    };
  }
  return {
    kind: "emulator",
    loggedIn: false,
    account: undefined,
    currentAccount: async () => undefined,
    agentUrl: `http://127.0.0.1:${choice.listener?.port}`,
    defaultAccount: ctx.account,
    named: [],
  };
}

/**
 * Opens the stores, wires the bridge on them (server/app-wiring.ts) on a deferred agent client and lets it serve
 * `input.server`; then builds the upstream (the protocol code and, without credentials, the embedded emulator on the
 * port bound for it) and the real agent client, which turns started meanwhile wait for.
 */
export async function startRuntime(input: RuntimeInput): Promise<Runtime> {
  const { ctx, logger, shared, choice, server } = input;
  const { config } = ctx;
  const served = servedUpstream(input);
  const shutdown = new ShutdownNotice();
  const drain = (drainMs: number) => drainServer(server, shutdown, drainMs, logger);
  // The stores are opened first, in the upstream's own data (the emulator's data is kept apart from Cursor's).
  let stores: ServeStores;
  try {
    stores = await openStores(
      config,
      upstreamDataDir(config, choice.kind),
      choice.kind,
      logger.child({ component: "engine" }),
      shared,
    );
  } catch (error) {
    await shared?.close();
    throw error;
  }
  // Named accounts (issue #29): one agent client and engine each, chosen per request by the key's account. Their names
  // are known from the logins.
  const { named } = served;
  const accountNames = [served.defaultAccount, ...named.map((login) => login.name)];
  // The team gateway: virtual keys (polled for changes), the admin API with an admin key, the audit log.
  let gateway: Gateway;
  let keyUsageSource: KeyUsageSource | undefined;
  try {
    const { keys, audit } = await openGatewayStores(config, shared);
    gateway = await createGateway({
      keys,
      audit,
      apiKey: config.apiKey,
      adminKey: config.adminKey,
      adminBodyGuard: requireJson(),
      accounts: () => accountNames,
      keyUsage: () => keyUsageSource,
      logger: logger.child({ component: "gateway" }),
    });
    if (gateway.index.hasKeys()) {
      logger.info("virtual keys are in use: every API request needs one (cursor-bridge keys list)", {
        store: keys.location,
      });
    }
  } catch (error) {
    await stores.close();
    throw error;
  }
  const cluster = stores.cluster;
  const instanceUrl = cluster === undefined ? undefined : config.instanceUrl;
  const wildcard = ["0.0.0.0", "::", "[::]"].includes(config.host);
  // Other instances forward tool results to this one under the name its instance URL gives.
  const instanceHost =
    cluster === undefined
      ? undefined
      : instanceUrl !== undefined
        ? new URL(instanceUrl).hostname
        : wildcard
          ? hostname()
          : config.host;
  const settings = engineSettings(config, stores);
  // Virtual keys' limits and spend (team gateway): inert until the auth middleware sets a principal.
  const limits = await openLimits(config, upstreamDataDir(config, choice.kind), stores.client, logger);
  // Per-key usage (spend, tokens, budget) over every key that is not revoked: the status page's table and the spend
  // gauges of /metrics read the same snapshot, over the records the key index already holds (no store read per scrape).
  const keyUsage = createKeyUsageSource(limits, async () =>
    gateway.index
      .records()
      .filter((record) => record.revokedAt === undefined)
      .map((record) => ({ keyId: record.id, keyName: record.name, limits: record.limits })),
  );
  keyUsageSource = keyUsage;
  // Settled once the upstream is built (below, after the app serves).
  let settle: { resolve(upstream: Upstream): void; reject(error: unknown): void } | undefined;
  const upstreamReady = new Promise<Upstream>((resolve, reject) => {
    settle = { resolve, reject };
  });
  upstreamReady.catch(() => {});
  // Their clients are built once the upstream is (turns started meanwhile wait).
  const clientOf = (name: string) =>
    deferredAgentClient(
      upstreamReady.then(async (upstream) => {
        const edge = name === upstream.defaultAccount ? upstream : upstream.named.find((each) => each.name === name);
        if (edge === undefined) throw new Error(`no upstream for the account ${name}`);
        return (await import("../server/wiring.js")).wireAgentClient({
          api: edge.api,
          tokenSource: edge.tokenSource,
          stores: { conversations: stores.conversationStore },
          logger,
          // Cursor refused the client version as outdated: learn a newer one and retry the turn once.
          agent: {
            ...settings.agent,
            renewClientVersion: () => ctx.clientVersion.heal("Cursor refused it as outdated"),
          },
          account: named.length === 0 ? undefined : name,
        });
      }),
    );
  const clients = new Map(accountNames.map((name) => [name, clientOf(name)] as const));
  // The default account's plan usage (the status page's, and its row with named accounts).
  const defaultUsage = async (signal: AbortSignal) =>
    planUsageOf(await (await upstreamReady).api.getCurrentPeriodUsage(signal));
  const { engine, app } = wireApp(
    { defaultAccount: ctx.account, clients },
    {
      // Stored /v1/responses (store: true) sit next to the conversations.
      stores: { conversations: stores.conversationStore, index: stores.index, responses: stores.responseStore },
      logger,
      engine: { ...settings.engine, ...(cluster === undefined ? {} : { forwarder: cluster.forwarder }) },
      gateway: {
        auth: gateway.auth,
        admin: gateway.admin,
        adminKey: config.adminKey,
        onOwnerGone: gateway.onOwnerGone,
        keySpend: {
          snapshot: async () =>
            (await keyUsage.keyUsage()).map((usage) => ({
              keyName: usage.keyName,
              spendUsd: usage.spendUsd,
              budgetUsd: usage.budgetUsd,
            })),
        },
      },
      app: {
        options: {
          apiKey: config.apiKey,
          anthropicModels: config.anthropicModels,
          modelAliases: config.modelAliases,
          corsOrigins: config.corsOrigins,
          // The bound address is a name clients use; a wildcard address is not (browsers send pages' requests to 0.0.0.0).
          allowedHosts: [
            ...(wildcard ? config.allowedHosts : [...config.allowedHosts, config.host]),
            ...(instanceHost === undefined ? [] : [instanceHost]),
          ],
          allowedOrigins: config.allowedOrigins,
          maxBodyBytes: bodyLimitForImages(config.maxBodyBytes, config.maxImageBytes),
          maxImageBytes: config.maxImageBytes,
          reasoningOutput: config.reasoningOutput,
          upstream: served.kind,
          // A getter: `logout` while the server runs turns it false (upstream.ts).
          get loggedIn() {
            return served.loggedIn;
          },
          version: packageVersion(),
        },
        now: Date.now,
        newId: () => randomUUID().replaceAll("-", ""),
        shutdown,
        status: {
          account: served.currentAccount,
          upstreamUrl: served.agentUrl,
          usage: defaultUsage,
          // With named accounts, each one's usage (one login's is the usage above).
          accounts:
            named.length === 0
              ? []
              : [
                  {
                    name: ctx.account,
                    default: true,
                    who: served.currentAccount,
                    usage: defaultUsage,
                  },
                  ...named.map((login) => ({
                    name: login.name,
                    default: false,
                    who: login.current,
                    usage: async (signal: AbortSignal) => {
                      const edge = (await upstreamReady).named.find((each) => each.name === login.name);
                      return edge === undefined ? undefined : planUsageOf(await edge.api.getCurrentPeriodUsage(signal));
                    },
                  })),
                ],
          // The per-key table is for the admin only (the admin key as a bearer token).
          keys: {
            usage: keyUsage,
            isAdmin: (request: Request) => gateway.isAdmin(request.headers.get("authorization") ?? undefined),
            inUse: () => gateway.index.hasKeys(),
          },
        },
        ...(cluster === undefined ? {} : { cluster: { auth: cluster.auth, signingKey: cluster.signingKey } }),
        limits: limits.middleware,
        ...(stores.client === undefined ? {} : { storeHealth: stores.client.health }),
      },
    },
  );
  // Cursor's server config, read shortly after the start and once a day: the client version policy
  // (protocol/cursor/client-version-heal.ts), and its HTTP/2 hint, which each account's API client follows as read with
  // that account's login (protocol/cursor/cursor-api.ts; docs/commands.md, `--transport`).
  ctx.clientVersion.useLogger(logger.child({ component: "cursor" }));
  let versionTimer: ReturnType<typeof setTimeout> | undefined;
  const readServerConfig = async (): Promise<void> => {
    if (choice.kind !== "cursor") return;
    await upstreamReady.then(
      async (upstream) => {
        const signal = () => AbortSignal.timeout(30_000);
        const policy = ctx.clientVersion.check(async () => {
          const { policyOf } = await import("../protocol/cursor/client-version-policy.js");
          const config = await upstream.api.getServerConfig?.(signal());
          return config === undefined ? undefined : policyOf(config);
        });
        // The named accounts' answers set only their own client's transport; their version policy is Cursor's one.
        const hints = upstream.named.map((account) =>
          account.api.getServerConfig?.(signal()).then(
            () => undefined,
            (error: unknown) =>
              logger.debug("Cursor's server config not read", { component: "cursor", account: account.name, error }),
          ),
        );
        await Promise.all([policy, ...hints]);
      },
      () => {},
    );
  };
  if (choice.kind === "cursor") {
    // Not during the start: the call (a GetServerConfig answer decoded, the policy code loaded) came before the first
    // turn's model list and Run, while a turn refused as outdated heals and is retried at once anyway.
    versionTimer = setTimeout(() => {
      void readServerConfig();
      versionTimer = setInterval(() => void readServerConfig(), VERSION_CHECK_INTERVAL_MS);
      versionTimer.unref();
    }, FIRST_VERSION_CHECK_DELAY_MS);
    versionTimer.unref();
  }
  // Ends the model list's fetch at start (below) when the server closes before it answered.
  const prefetch = new AbortController();
  const closeRest = async () => {
    if (versionTimer !== undefined) clearTimeout(versionTimer);
    prefetch.abort();
    await gateway.close();
    await engine.closeAll();
    await upstreamReady.then(
      (upstream) => upstream.close(),
      () => {},
    );
    // After the turns: what their settles add, and what the disk refused earlier, is written before the exit. Before
    // the stores close: on Redis the limits share their connection, and the settles under way and the charge of the
    // requests left unsettled need it.
    await limits.close();
    await stores.close();
  };
  try {
    if (cluster !== undefined) {
      const url = instanceUrl ?? defaultInstanceUrl(config.host, server.port);
      await cluster.directory.register({ tag: cluster.tag, url, startedAt: Date.now() });
      logger.info("joined the instances sharing the store", { instance: cluster.tag, url });
    }
    await server.serve(app);
  } catch (error) {
    settle?.reject(error);
    await closeRest();
    throw error;
  }
  // The app serves: now the code only turns need (the protocol code, the emulator).
  createUpstream(ctx, logger, choice).then(
    (upstream) => settle?.resolve(upstream),
    (error: unknown) => settle?.reject(error),
  );
  // The model list the first turn resolves its model from, fetched as soon as the upstream is built, through the
  // default account's cached, single-flight catalogue (backend/models.ts): the first turn then joins the fetch in
  // flight or reads its answer instead of paying for the first round trip. A failure (not logged in, offline, Cursor
  // down) is only a debug line: the first turn fetches it again, with the errors it always had.
  upstreamReady
    .then(() => engine.listModels(prefetch.signal, ctx.account, { prefetch: true }))
    .then(
      (models) => logger.debug("model list fetched at start", { models: models.length }),
      (error: unknown) => {
        if (!prefetch.signal.aborted)
          logger.debug("model list not fetched at start: the first turn fetches it", { error });
      },
    );
  // Handled here too: a caller that never asks (a test that only closes the server) gets no unhandled rejection.
  const ready = upstreamReady.then(() => {});
  ready.catch(() => {});
  return {
    upstream: served,
    ready,
    readServerConfig,
    virtualKeys: gateway.index.hasKeys(),
    close: async (drainMs) => {
      if (drainMs === undefined) await server.close();
      else await drain(drainMs);
      await closeRest();
    },
  };
}
