/**
 * The heavy half of `serve`, loaded once its port is bound and its banner printed (serve.ts): the upstream (the
 * protocol code and, without credentials, the embedded emulator on the port bound for it), the stores, and the bridge
 * wired on them by server/wiring.ts (the test stack wires through the same factory), which then serves the bound
 * port, the requests held since the bind first.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { adminKeyDigest, createGateway, type Gateway, isAdminKey } from "../gateway/index.js";
import { createKeyUsageSource } from "../gateway/limits/index.js";
import type { PendingServer } from "../server/listen.js";
import { requireJson } from "../server/request-guard.js";
import { type AccountUpstream, wireBridge } from "../server/wiring.js";
import type { StoreClient } from "../stores/redis/client.js";
import { bodyLimitForImages } from "../surfaces/kit/image-input.js";
import type { Logger } from "../util/logger.js";
import { presentedKey } from "../util/presented-key.js";
import type { CliContext } from "./context.js";
import { openLimits } from "./limits-setup.js";
import { engineSettings, openGatewayStores, openStores, type ServeStores } from "./store-setup.js";
import { createUpstream, type Upstream } from "./upstream.js";
import type { UpstreamChoice } from "./upstream-choice.js";
import { planUsageOf } from "./usage.js";
import { packageVersion } from "./version.js";

/** Where other instances reach this one when `--instance-url` is not given. */
function defaultInstanceUrl(host: string, port: number): string {
  const name = ["0.0.0.0", "::", "[::]"].includes(host) ? hostname() : host;
  return `http://${name.includes(":") && !name.startsWith("[") ? `[${name}]` : name}:${port}`;
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
  upstream: Upstream;
  /** Closes the server, the open turns, the stores and the upstream. */
  close(): Promise<void>;
}

/** Builds the upstream and the stores, wires the bridge on them (server/wiring.ts) and lets it serve `input.server`. */
export async function startRuntime(input: RuntimeInput): Promise<Runtime> {
  const { ctx, logger, shared, choice, server } = input;
  const { config } = ctx;
  let upstream: Upstream;
  try {
    upstream = await createUpstream(ctx, logger, choice);
  } catch (error) {
    await shared?.close();
    throw error;
  }
  // The stores are opened once the upstream's kind is known (the emulator's data is kept apart from Cursor's).
  let stores: ServeStores;
  try {
    stores = await openStores(config, upstream.dataDir, upstream.kind, logger.child({ component: "engine" }), shared);
  } catch (error) {
    await upstream.close();
    await shared?.close();
    throw error;
  }
  // The team gateway: virtual keys (polled for changes), the admin API with an admin key, the audit log.
  let gateway: Gateway;
  let gatewayStores: Awaited<ReturnType<typeof openGatewayStores>>;
  try {
    gatewayStores = await openGatewayStores(config, shared);
    const { keys, audit } = gatewayStores;
    gateway = await createGateway({
      keys,
      audit,
      apiKey: config.apiKey,
      adminKey: config.adminKey,
      adminBodyGuard: requireJson(),
      logger: logger.child({ component: "gateway" }),
    });
    if (gateway.index.hasKeys()) {
      logger.info("virtual keys are in use: every API request needs one (cursor-bridge keys list)", {
        store: keys.location,
      });
    }
  } catch (error) {
    await stores.close();
    await upstream.close();
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
  // Named accounts (issue #29): one engine each, chosen per request by the key's account; one login is wired as always.
  const accountSources =
    upstream.named.length === 0
      ? { api: upstream.api, tokenSource: upstream.tokenSource }
      : {
          accounts: {
            defaultAccount: upstream.defaultAccount,
            upstreams: new Map<string, AccountUpstream>([
              [upstream.defaultAccount, { api: upstream.api, tokenSource: upstream.tokenSource }],
              ...upstream.named.map((named) => [named.name, named] as const),
            ]),
          },
        };
  // Virtual keys' limits and spend (team gateway): inert until the auth middleware sets a principal.
  const limits = await openLimits(config, upstream.dataDir, stores.client, logger);
  // Per-key usage (spend, tokens, budget) over every key that is not revoked: the status page's table and the spend
  // gauges of /metrics read the same snapshot.
  const keyUsage = createKeyUsageSource(limits, async () =>
    (await gatewayStores.keys.list())
      .filter((record) => record.revokedAt === undefined)
      .map((record) => ({ keyId: record.id, keyName: record.name, limits: record.limits })),
  );
  const adminDigest = config.adminKey === undefined ? undefined : adminKeyDigest(config.adminKey);
  const { engine, app } = wireBridge({
    ...accountSources,
    // Stored /v1/responses (store: true) sit next to the conversations.
    stores: { conversations: stores.conversationStore, index: stores.index, responses: stores.responseStore },
    logger,
    agent: settings.agent,
    engine: { ...settings.engine, ...(cluster === undefined ? {} : { forwarder: cluster.forwarder }) },
    gateway: {
      auth: gateway.auth,
      admin: gateway.admin,
      adminKey: config.adminKey,
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
        upstream: upstream.kind,
        // A getter: `logout` while the server runs turns it false (upstream.ts).
        get loggedIn() {
          return upstream.loggedIn;
        },
        version: packageVersion(),
      },
      now: Date.now,
      newId: () => randomUUID().replaceAll("-", ""),
      status: {
        account: upstream.account,
        upstreamUrl: upstream.agentUrl,
        usage: async (signal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
        // With named accounts, each one's usage (one login's is the usage above).
        accounts:
          upstream.named.length === 0
            ? []
            : [
                {
                  name: upstream.defaultAccount,
                  default: true,
                  who: upstream.account,
                  usage: async (signal: AbortSignal) => planUsageOf(await upstream.api.getCurrentPeriodUsage(signal)),
                },
                ...upstream.named.map((named) => ({
                  name: named.name,
                  default: false,
                  who: named.who,
                  usage: async (signal: AbortSignal) => planUsageOf(await named.api.getCurrentPeriodUsage(signal)),
                })),
              ],
        // The per-key table is for the admin only (the admin key as a bearer token).
        ...(adminDigest === undefined
          ? {}
          : {
              keys: {
                usage: keyUsage,
                isAdmin: (request: Request) => {
                  const presented = presentedKey(request.headers.get("authorization") ?? undefined, undefined);
                  return presented !== undefined && isAdminKey(presented, adminDigest);
                },
              },
            }),
      },
      ...(cluster === undefined ? {} : { cluster: { auth: cluster.auth, signingKey: cluster.signingKey } }),
      limits: limits.middleware,
    },
  });
  const closeRest = async () => {
    gateway.close();
    await engine.closeAll();
    await stores.close();
    await upstream.close();
  };
  try {
    if (cluster !== undefined) {
      const url = instanceUrl ?? defaultInstanceUrl(config.host, server.port);
      await cluster.directory.register({ tag: cluster.tag, url, startedAt: Date.now() });
      logger.info("joined the instances sharing the store", { instance: cluster.tag, url });
    }
    await server.serve(app);
  } catch (error) {
    await closeRest();
    throw error;
  }
  return {
    upstream,
    close: async () => {
      await server.close();
      await closeRest();
    },
  };
}
