/**
 * The shared Redis store's connection (`--store redis://…`): one ioredis client per instance, set up to fail fast.
 * With the offline queue off, a command issued while Redis is unreachable fails at once instead of waiting for a
 * reconnect, and every failure becomes a 503 `store_unavailable` naming the store. The client reconnects by itself
 * in the background (capped backoff), so the instance recovers without a restart when Redis returns.
 *
 * A Redis that keeps its connection but stops answering (a partition that drops packets, a process stopped or stuck)
 * is no closed connection: each command waited its full timeout, and `/health` said ok. A command that fails on a
 * ready connection therefore has the store pinged; when the ping fails too, the store counts as not answering: every
 * call fails at once with the 503 and `/health` says so, while a ping every {@link STALL_PROBE_MS} looks for it to
 * answer again.
 */
import { connect, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";
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
  /** Undefined while the store answers; else why it does not (for `/health`). */
  health(): string | undefined;
  /** A store call failed: checks whether the store still answers (see the module comment). */
  noteFailure?(): void;
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
  /** @default Date.now */
  now?: () => number;
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
    client.noteFailure?.();
    throw storeUnavailable(client.label, error);
  }
}

/** The same connection with keys under `<prefix><namespace>:`. */
export function namespaced(client: StoreClient, namespace: string): StoreClient {
  return { ...client, prefix: `${client.prefix}${namespace}:` };
}

/** How often a store that keeps its connection but does not answer is pinged again. */
export const STALL_PROBE_MS = 1000;

/** How often, at most, a store that stays down is mentioned again after the first warning. */
const DOWN_REMINDER_MS = 60_000;

/** Why a connection failed, in the words of its most telling error. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * A failure to connect that retrying will not fix: the URL, the credentials, TLS or the database index is wrong. The
 * error says what to fix (a usage error, exit 2), never "retry shortly"; anything else is {@link storeUnavailable}.
 */
export function storeConfigError(label: string, url: string, error: unknown): ProxyError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "";
  const cause = describe(error);
  const fix = (what: string) =>
    new ProxyError("invalid_request", `The shared store ${label} ${what}`, { cause: error, detail: "invalid_config" });
  if (/WRONGPASS|invalid (username-)?password/i.test(message)) {
    return fix(`refused the user name or password in --store (${cause}): correct them in the URL.`);
  }
  if (/NOAUTH|Authentication required/i.test(message)) {
    return fix(`needs a password (${cause}): give it in --store, redis://:PASSWORD@host:port/db.`);
  }
  if (/DB index is out of range/i.test(message)) {
    const db = new URL(url).pathname.slice(1);
    return fix(
      `has no database ${db} (${cause}): use a database index below the server's \`databases\` setting (16 by default).`,
    );
  }
  if (code === "ENOTFOUND") {
    return fix(`names a host that does not resolve (${cause}): correct the host in --store.`);
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
    return fix(
      `presented a TLS certificate that was not accepted (${cause}): give the server one for this host name, signed ` +
        "by an authority this machine trusts, or add that authority with NODE_EXTRA_CA_CERTS=/path/to/ca.pem.",
    );
  }
  const tls =
    /^ERR_SSL_|^EPROTO$|^ERR_TLS_/.test(code) || /SSL routines|wrong version number|TLS connection/i.test(message);
  if (tls) {
    const scheme = url.startsWith("rediss:")
      ? "rediss:// needs a server that speaks TLS; use redis:// for one that does not, or fix its certificate"
      : "correct the URL's scheme (redis:// is plain, rediss:// is TLS)";
    return fix(`failed the TLS handshake (${cause}): ${scheme}.`);
  }
  return undefined;
}

/** Whether host:port of `url` answers a plain (non-TLS) Redis PING within `timeoutMs`. */
async function speaksPlainRedis(url: string, timeoutMs: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ""), port: Number(port || 6379) });
    let answer = "";
    const done = (plain: boolean) => {
      socket.destroy();
      resolve(plain);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      answer += chunk.toString("latin1");
      // +PONG, or -NOAUTH / -ERR from a server that needs a password: Redis either way.
      if (answer.includes("\r\n")) done(/^[+-]/.test(answer));
    });
  });
}

/** Whether host:port of `url` completes a TLS handshake within `timeoutMs` (its certificate unchecked: only asked). */
function speaksTls(url: string, timeoutMs: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port: Number(port || 6379),
      rejectUnauthorized: false,
      ...(isIP(host) ? {} : { servername: host }),
    });
    const done = (tls: boolean) => {
      socket.destroy();
      resolve(tls);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("error", () => done(false));
    socket.once("secureConnect", () => done(true));
  });
}

/** The database index of a store URL (`/0` … ), or a usage error for a URL that is not one. */
function parseStoreUrl(url: string, label: string): { db: number } {
  const bad = (why: string) =>
    new ProxyError(
      "invalid_request",
      `--store ${label} is not a valid Redis URL (${why}): use redis://[:password@]host[:port][/db] or rediss://….`,
      { detail: "invalid_config", param: "store" },
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad("it does not parse as a URL");
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") throw bad(`scheme ${parsed.protocol}`);
  if (parsed.hostname === "") throw bad("no host");
  const path = parsed.pathname.replace(/^\//, "");
  if (path === "") return { db: 0 };
  if (!/^\d{1,9}$/.test(path)) throw bad(`the database "${decodeURIComponent(path)}" is not a number`);
  return { db: Number(path) };
}

/**
 * Whether the server says it runs in cluster mode (`cluster_enabled:1` in `INFO cluster`). A server that does not
 * answer INFO (some managed Redis restrict it) is not taken for one: only a positive answer counts.
 */
async function isClusterNode(redis: Redis): Promise<boolean> {
  try {
    return /^cluster_enabled:1\r?$/m.test(await redis.info("cluster"));
  } catch {
    return false;
  }
}

/**
 * Connects to the store. Rejects with a usage error naming what to fix when retrying cannot help (bad URL, wrong
 * or missing password, TLS mismatch, unknown host, a database index the server does not have; see
 * {@link storeConfigError}; a Redis Cluster node, see {@link isClusterNode}), and with a 503-shaped error carrying
 * the real cause when Redis does not answer within the timeout.
 */
export async function connectStore(options: StoreClientOptions): Promise<StoreClient> {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? 2000;
  const now = options.now ?? Date.now;
  const label = redactStoreUrl(options.url);
  const { db } = parseStoreUrl(options.url, label);
  // Loaded on first use: a server without `--store redis://…` never pays for ioredis (about 3 MB of RSS). `default`,
  // because the bundle in dist/ gives a CommonJS package only that export.
  const { default: RedisClient } = await import("ioredis");
  const redis = new RedisClient(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    // The database is selected below, where a refusal is seen (ioredis only emits it as an event and stays on db 0).
    db: 0,
    // Reconnect forever in the background, at most every 2 s: requests meanwhile fail fast with a 503.
    retryStrategy: (attempt) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000),
  });
  // The last error the connection reported: the real reason behind a "Connection is closed.".
  let lastError: Error | undefined;
  let connected = false;
  // Since when the store is unreachable (after it once was reachable), and when that was last said.
  let downSince: number | undefined;
  let remindedAt = 0;
  // Why the store, connected, does not answer (see the module comment); undefined while it does.
  let stalled: string | undefined;
  let probing = false;
  const probe = (): void => {
    if (probing || redis.status !== "ready") return;
    probing = true;
    redis.ping().then(
      () => {
        probing = false;
        if (stalled !== undefined) logger.info("the shared store answers again", { store: label });
        stalled = undefined;
      },
      (error: unknown) => {
        probing = false;
        if (stalled === undefined) {
          logger.warn("the shared store does not answer; requests get 503 until it does", {
            store: label,
            error: describe(error),
          });
        }
        stalled = describe(error);
        setTimeout(probe, STALL_PROBE_MS).unref();
      },
    );
  };
  redis.on("ready", () => {
    stalled = undefined;
    if (downSince !== undefined) {
      const seconds = Math.max(0, Math.round((now() - downSince) / 1000));
      logger.info("the shared store is reachable again", { store: label, down_s: seconds });
    }
    downSince = undefined;
    lastError = undefined;
  });
  redis.on("error", (error: Error) => {
    lastError = error;
    logger.debug("store connection error", { store: label, error: describe(error) });
  });
  redis.on("end", () => logger.debug("store connection ended", { store: label }));
  redis.on("close", () => {
    if (!connected) return;
    const at = now();
    if (downSince === undefined) {
      // Once when lost, then at most once a minute while every reconnect attempt fails.
      downSince = at;
      remindedAt = at;
      logger.warn("lost the connection to the shared store; requests get 503 until it returns", {
        store: label,
        ...(lastError === undefined ? {} : { error: describe(lastError) }),
      });
    } else if (at - remindedAt >= DOWN_REMINDER_MS) {
      remindedAt = at;
      logger.warn("the shared store is still unreachable; requests get 503 until it returns", {
        store: label,
        down_s: Math.round((at - downSince) / 1000),
        ...(lastError === undefined ? {} : { error: describe(lastError) }),
      });
    }
  });
  const fail = async (error: unknown): Promise<ProxyError> => {
    redis.disconnect();
    const cause = lastError ?? error;
    const config = storeConfigError(label, options.url, cause);
    if (config !== undefined) return config;
    // A plain Redis server never answers a TLS ClientHello (it waits for a line): the handshake only times out. Asked
    // in its own protocol, it answers at once, and the URL's scheme is the thing to fix.
    if (options.url.startsWith("rediss:") && (await speaksPlainRedis(options.url, timeoutMs))) {
      return new ProxyError(
        "invalid_request",
        `The shared store ${label} failed the TLS handshake: the server speaks plain Redis, without TLS. Use ` +
          "redis:// for it, or enable TLS on the server.",
        { cause, detail: "invalid_config" },
      );
    }
    // The other way round, a TLS server drops the plain client's first command (ECONNRESET): it completes a handshake.
    if (options.url.startsWith("redis:") && (await speaksTls(options.url, timeoutMs))) {
      return new ProxyError(
        "invalid_request",
        `The shared store ${label} speaks TLS: use rediss:// for it (the connection was dropped: ${describe(cause)}).`,
        { cause, detail: "invalid_config" },
      );
    }
    return storeUnavailable(label, cause);
  };
  try {
    await redis.connect();
  } catch (error) {
    throw await fail(error);
  }
  // ioredis reports a refused AUTH during its handshake as an event and may still call the connection ready.
  if (lastError !== undefined && storeConfigError(label, options.url, lastError) !== undefined) {
    throw await fail(lastError);
  }
  // Before the database is selected: a cluster node refuses SELECT, which would hide the real reason.
  if (await isClusterNode(redis)) {
    redis.disconnect();
    throw new ProxyError(
      "invalid_request",
      `The shared store ${label} is a Redis Cluster node: the store must be one Redis server (a primary, replicas ` +
        "allowed; Redis Cluster is not supported), because its scripts and commands use keys that a cluster spreads " +
        "over different hash slots. Point --store at a standalone Redis.",
      { detail: "invalid_config" },
    );
  }
  if (db !== 0) {
    try {
      // Remembered by ioredis and selected again on every reconnect.
      await redis.select(db);
    } catch (error) {
      throw await fail(error);
    }
  }
  connected = true;
  return {
    redis,
    label,
    prefix: options.namespace === undefined ? "cursor-bridge:" : `cursor-bridge:${options.namespace}:`,
    assertReady() {
      if (redis.status !== "ready") {
        throw storeUnavailable(label, lastError ?? new Error(`connection ${redis.status}`));
      }
      if (stalled !== undefined) throw storeUnavailable(label, new Error(`it does not answer: ${stalled}`));
    },
    health() {
      if (redis.status === "ready") return stalled === undefined ? undefined : `${label} does not answer (${stalled})`;
      return `${label} is unreachable (${lastError === undefined ? `connection ${redis.status}` : describe(lastError)})`;
    },
    noteFailure: probe,
    async close() {
      connected = false;
      try {
        await redis.quit();
      } catch {
        redis.disconnect();
      }
    },
  };
}
