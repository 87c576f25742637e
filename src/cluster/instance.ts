/**
 * The instances sharing one store. Each process gets a random tag at startup; every tool-call id it hands out ends
 * with `_cb<tag>`, and the directory (`instance:<tag>` → its URL, a key that expires unless the instance keeps
 * refreshing it) tells the others where to forward a result for one of its parked turns. A restarted instance has a
 * new tag: its old ids name an instance that is gone, and their conversations continue from the stored state.
 */
import { randomBytes } from "node:crypto";
import { type StoreClient, storeCall } from "../stores/redis/client.js";
import { type Logger, silentLogger } from "../util/logger.js";

const TAG_PATTERN = /_cb([a-z0-9]{8})$/;

/** A fresh instance tag: 8 characters of [a-z0-9]. */
export function newInstanceTag(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return [...randomBytes(8)].map((byte) => alphabet[byte % alphabet.length]).join("");
}

/** What an instance appends to the tool-call ids it hands out. */
export function toolCallIdSuffix(tag: string): string {
  return `_cb${tag}`;
}

/** The instance tag a tool-call id ends with, if any (clients may prefix ids, as the Anthropic surface does). */
export function instanceOfToolCallId(id: string): string | undefined {
  return TAG_PATTERN.exec(id)?.[1];
}

/** One live instance as the directory lists it. */
export interface InstanceInfo {
  tag: string;
  url: string;
  startedAt: number;
}

/** The directory of running instances in the shared store. */
export interface InstanceDirectory {
  /** The URL of a live instance; undefined when it is gone (its key expired or it shut down). */
  urlOf(tag: string): Promise<string | undefined>;
  /** Every live instance. */
  list(): Promise<InstanceInfo[]>;
  /** Stops refreshing this instance's entry and removes it. */
  close(): Promise<void>;
}

/** Options of {@link createInstanceDirectory}. */
export interface DirectoryOptions {
  client: StoreClient;
  /** How long an entry outlives its last refresh (refreshed every third of it). @default 15000 */
  ttlMs?: number;
  logger?: Logger;
}

/** The directory plus this instance's registration. */
export interface OwnDirectory extends InstanceDirectory {
  /** Registers this instance and keeps its entry fresh until `close()`. */
  register(self: InstanceInfo): Promise<void>;
}

function parseInfo(text: string | null): InstanceInfo | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(text) as Partial<InstanceInfo>;
    return typeof value.url === "string" && typeof value.tag === "string"
      ? { tag: value.tag, url: value.url, startedAt: value.startedAt ?? 0 }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Creates the directory on the shared store. */
export function createInstanceDirectory(options: DirectoryOptions): OwnDirectory {
  const { client } = options;
  const ttlMs = options.ttlMs ?? 15_000;
  const logger = options.logger ?? silentLogger;
  const keyOf = (tag: string) => `${client.prefix}instance:${tag}`;
  let self: InstanceInfo | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const refresh = async () => {
    if (self !== undefined) await client.redis.set(keyOf(self.tag), JSON.stringify(self), "PX", ttlMs);
  };
  return {
    async register(info) {
      self = info;
      await storeCall(client, refresh);
      timer = setInterval(() => {
        // While the store is down the entry may expire; the first refresh after it returns registers again.
        refresh().catch((error: unknown) => logger.debug("could not refresh this instance's entry", { error }));
      }, ttlMs / 3);
      timer.unref();
    },
    urlOf: (tag) => storeCall(client, async () => parseInfo(await client.redis.get(keyOf(tag)))?.url),
    list: () =>
      storeCall(client, async () => {
        const keys: string[] = [];
        let cursor = "0";
        do {
          const [next, batch] = await client.redis.scan(cursor, "MATCH", keyOf("*"), "COUNT", 100);
          cursor = next;
          keys.push(...batch);
        } while (cursor !== "0");
        if (keys.length === 0) return [];
        const values = await client.redis.mget(...keys);
        return values.map(parseInfo).filter((info): info is InstanceInfo => info !== undefined);
      }),
    async close() {
      if (timer !== undefined) clearInterval(timer);
      if (self !== undefined) await client.redis.del(keyOf(self.tag)).catch(() => undefined);
    },
  };
}
