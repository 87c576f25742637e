/**
 * Builds the stores `serve` runs on from `--store`: the file stores under the data directory (the default, one
 * instance), or the shared Redis stores (several instances behind a load balancer). Whatever is chosen sits behind
 * the same interfaces, so nothing else in the server knows which.
 */
import { join } from "node:path";
import type { ClusterAuth } from "../cluster/cluster-auth.js";
import type { OwnDirectory } from "../cluster/instance.js";
import type { BridgeConfig } from "../config/index.js";
import type { TurnForwarder } from "../engine/index.js";
import { createFileConversationIndex } from "../stores/file/conversation-index.js";
import { createFileConversationStore } from "../stores/file/conversation-store.js";
import { createFileResponseStore } from "../stores/file/response-store.js";
import type { StoreClient } from "../stores/redis/client.js";
import type { AuditLog, ConversationIndex, ConversationStore, KeyStore, ResponseStore } from "../stores/types.js";
import { ProxyError } from "../util/errors.js";
import type { Logger } from "../util/logger.js";
import { ensurePrivateDir } from "../util/private-dir.js";

/** The stores of one server. */
export interface ServeStores {
  index: ConversationIndex;
  responseStore: ResponseStore;
  /** The agent client's conversations (checkpoint + blobs). */
  conversationStore: ConversationStore;
  /** The Redis connection when `--store` is Redis. */
  client: StoreClient | undefined;
  /** This instance among the others sharing the Redis store. */
  cluster: ClusterMember | undefined;
  close(): Promise<void>;
}

/** What an instance behind a shared store needs besides the stores. */
export interface ClusterMember {
  tag: string;
  /** Appended to the tool-call ids this instance hands out. */
  toolCallIdSuffix: string;
  directory: OwnDirectory;
  forwarder: TurnForwarder;
  auth: ClusterAuth;
  /** Key of the thinking signatures, the same on every instance. */
  signingKey: Buffer;
}

/** True when `--store` names a Redis server. */
export function isRedisStore(store: string): boolean {
  return store.startsWith("redis://") || store.startsWith("rediss://");
}

/** Connects to the shared store when `--store` is Redis (the cluster secret is then required). */
export async function connectSharedStore(config: BridgeConfig, logger: Logger): Promise<StoreClient | undefined> {
  if (!isRedisStore(config.store)) return undefined;
  if (config.clusterSecret === undefined) {
    throw new ProxyError(
      "invalid_request",
      "--store redis://… needs --cluster-secret (or CURSOR_BRIDGE_CLUSTER_SECRET), the same on every instance.",
      { detail: "invalid_config" },
    );
  }
  // The Redis client (ioredis) and the cluster code load only for a Redis store.
  const { connectStore } = await import("../stores/redis/client.js");
  return connectStore({ url: config.store, logger });
}

/**
 * Opens the stores: the file stores under `dataDir`, or the shared ones on `shared` (its connection is closed with
 * them); `namespace` keeps the emulator's data apart from Cursor's.
 */
export async function openStores(
  config: BridgeConfig,
  dataDir: string,
  namespace: string,
  logger: Logger,
  shared: StoreClient | undefined,
): Promise<ServeStores> {
  if (shared === undefined) {
    // The data dir holds every conversation: the user's alone, even when it existed before with a looser mode.
    await ensurePrivateDir(config.dataDir, { logger });
    if (dataDir !== config.dataDir) await ensurePrivateDir(dataDir, { logger });
    // Next to the conversation records: the index maps client histories to them and survives restarts.
    const index = await createFileConversationIndex({ dir: join(dataDir, "conversations"), logger });
    const responseStore = createFileResponseStore({ dir: join(dataDir, "responses"), logger });
    const conversationStore = createFileConversationStore({
      dir: join(dataDir, "conversations"),
      logger,
      maxEntries: config.maxConversations,
      maxTotalBytes: config.maxConversationBytes,
    });
    return {
      index,
      responseStore,
      conversationStore,
      client: undefined,
      cluster: undefined,
      close: () => index.close(),
    };
  }
  const [
    { createClusterAuth, deriveKey },
    { createTurnForwarder },
    { createInstanceDirectory, newInstanceTag, toolCallIdSuffix },
    { namespaced },
    { createRedisConversationIndex },
    { createRedisConversationStore },
    { createRedisResponseStore },
    { createRedisNonceStore },
  ] = await Promise.all([
    import("../cluster/cluster-auth.js"),
    import("../cluster/forwarder.js"),
    import("../cluster/instance.js"),
    import("../stores/redis/client.js"),
    import("../stores/redis/conversation-index.js"),
    import("../stores/redis/conversation-store.js"),
    import("../stores/redis/response-store.js"),
    import("../cluster/redis-nonces.js"),
  ]);
  const secret = config.clusterSecret ?? "";
  const client = namespaced(shared, namespace);
  const tag = newInstanceTag();
  const directory = createInstanceDirectory({ client, logger });
  const auth = createClusterAuth(secret, { nonces: createRedisNonceStore(client) });
  return {
    index: createRedisConversationIndex({ client }),
    responseStore: createRedisResponseStore({ client, logger }),
    conversationStore: createRedisConversationStore({ client, maxEntries: config.maxConversations, logger }),
    client,
    cluster: {
      tag,
      toolCallIdSuffix: toolCallIdSuffix(tag),
      directory,
      forwarder: createTurnForwarder({ selfTag: tag, directory, auth, logger }),
      auth,
      signingKey: deriveKey(secret, "thinking signatures"),
    },
    close: async () => {
      await directory.close();
      await shared.close();
    },
  };
}

/**
 * The agent-client and engine settings of a bridge on these stores, read from the config: `serve` and `acp` wire
 * their engine with them (server/wiring.ts). Forwarding tool results to other instances is serve's alone.
 */
export function engineSettings(config: BridgeConfig, stores: ServeStores) {
  const cluster = stores.cluster;
  return {
    agent: {
      stallTimeoutMs: config.stallTimeoutMs,
      visionModels: config.visionModels,
      ...(cluster === undefined ? {} : { toolCallIdSuffix: cluster.toolCallIdSuffix }),
    },
    engine: {
      parkedTurnTtlMs: config.parkedTurnTtlMs,
      maxParkedTurns: config.maxParkedTurns,
      cursorTools: config.cursorTools,
      ...(stores.client === undefined ? {} : { storeReady: stores.client.assertReady }),
    },
  };
}

/** The team gateway's stores: the virtual keys and the audit log. */
export interface GatewayStores {
  keys: KeyStore;
  audit: AuditLog;
  /** Where the audit log is (a path, or the Redis URL without credentials). */
  auditLocation: string;
}

/**
 * The gateway's stores on `--store`: `keys.json` and `audit.log` (both 0600) in the data directory, or, on a Redis
 * store, keys and an audit stream under `cursor-bridge:gateway:` (the same for Cursor and the emulator, and for the
 * `keys` and `audit` commands run anywhere with the same `--store`).
 */
export async function openGatewayStores(config: BridgeConfig, shared: StoreClient | undefined): Promise<GatewayStores> {
  if (shared === undefined) {
    const [{ createFileKeyStore }, { createFileAuditLog }] = await Promise.all([
      import("../stores/file/key-store.js"),
      import("../stores/file/audit-log.js"),
    ]);
    const audit = createFileAuditLog({ dir: config.dataDir });
    return { keys: createFileKeyStore({ dir: config.dataDir }), audit, auditLocation: audit.location };
  }
  const [{ namespaced }, { createRedisKeyStore }, { createRedisAuditLog }] = await Promise.all([
    import("../stores/redis/client.js"),
    import("../stores/redis/key-store.js"),
    import("../stores/redis/audit-log.js"),
  ]);
  const client = namespaced(shared, "gateway");
  return {
    keys: createRedisKeyStore(client),
    audit: createRedisAuditLog(client),
    auditLocation: `${shared.label} (stream ${client.prefix}audit)`,
  };
}
