/**
 * The shared Redis store's connection (`--store redis://…`): one ioredis client per instance, set up to fail fast.
 * With the offline queue off, a command issued while Redis is unreachable fails at once instead of waiting for a
 * reconnect, and every failure becomes a 503 `store_unavailable` naming the store. The client reconnects by itself
 * in the background (capped backoff), so the instance recovers without a restart when Redis returns.
 */
import type { Redis } from "ioredis";
import { ProxyError } from "../../util/errors.js";
import { type Logger, silentLogger } from "../../util/logger.js";

/** A connected store client plus what the rest of cluster/ needs to know about it. */
export interface StoreClient {
  redis: Redis;
  /** The store's URL without credentials (for messages and logs). */
  label: string;
  /** Key prefix of this deployment's keys (`cursor-bridge:<upstream>:`). */
  prefix: string;
  /** Throws the 503 a request gets while the store is unreachable. */
  assertReady(): void;
  close(): Promise<void>;
}

/** Options of {@link connectStore}. */
export interface StoreClientOptions {
  url: string;
  /** Separates the emulator's data from Cursor's (see {@link namespaced}). @default none: `cursor-bridge:` */
  namespace?: string;
  logger?: Logger;
  /** How long connecting (and each command) may take. @default 2000 */
  timeoutMs?: number;
}

/** The URL with any password removed. */
export function redactStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "redis store";
  }
}

/** The error every store failure turns into: 503, retryable, naming the store. */
export function storeUnavailable(label: string, cause?: unknown): ProxyError {
  const reason = cause instanceof Error && cause.message !== "" ? ` (${cause.message})` : "";
  return new ProxyError("backend_unavailable", `The shared store ${label} is unavailable${reason}. Retry shortly.`, {
    cause,
    detail: "store_unavailable",
    retryAfterSeconds: 1,
  });
}

/** Runs a store operation, turning any Redis failure into {@link storeUnavailable}. */
export async function storeCall<T>(client: StoreClient, operation: () => Promise<T>): Promise<T> {
  client.assertReady();
  try {
    return await operation();
  } catch (error) {
    if (error instanceof ProxyError) throw error;
    throw storeUnavailable(client.label, error);
  }
}

/** The same connection with keys under `<prefix><namespace>:`. */
export function namespaced(client: StoreClient, namespace: string): StoreClient {
  return { ...client, prefix: `${client.prefix}${namespace}:` };
}

/** Connects to the store; rejects with a 503-shaped error when Redis does not answer within the timeout. */
export async function connectStore(options: StoreClientOptions): Promise<StoreClient> {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? 2000;
  const label = redactStoreUrl(options.url);
  // Loaded on first use: a server without `--store redis://…` never pays for ioredis (about 3 MB of RSS). `default`,
  // because the bundle in dist/ gives a CommonJS package only that export.
  const { default: RedisClient } = await import("ioredis");
  const redis = new RedisClient(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    // Reconnect forever in the background, at most every 2 s: requests meanwhile fail fast with a 503.
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
  });
  let wasReady = false;
  redis.on("ready", () => {
    if (wasReady) logger.info("the shared store is reachable again", { store: label });
    wasReady = true;
  });
  redis.on("error", (error: Error) => logger.debug("store connection error", { store: label, error: error.message }));
  redis.on("end", () => logger.debug("store connection ended", { store: label }));
  redis.on("close", () => {
    if (wasReady)
      logger.warn("lost the connection to the shared store; requests get 503 until it returns", { store: label });
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw storeUnavailable(label, error);
  }
  return {
    redis,
    label,
    prefix: options.namespace === undefined ? "cursor-bridge:" : `cursor-bridge:${options.namespace}:`,
    assertReady() {
      if (redis.status !== "ready") throw storeUnavailable(label, new Error(`connection ${redis.status}`));
    },
    async close() {
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}
