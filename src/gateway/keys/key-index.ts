/**
 * A running server's view of the virtual keys: the records by hash, in memory, so a request costs one SHA-256 and a
 * map lookup. A timer polls the store's `version()` (a stat for the file store, a GET for Redis) every `pollMs` and
 * reloads on a change, so a key created, rotated or revoked anywhere (the CLI, another instance, the admin API) takes
 * effect within one poll; a key not found also checks at once (at most once per `minRecheckMs`), so a key that was
 * just created works on its first use. A request running on a key can {@link KeyIndex.watch} it: the poll tells it
 * when its key is revoked, rotated (the key it presented no longer works) or has expired, so it is cut then, not
 * left to run to its end.
 */
import type { KeyStore, VirtualKeyRecord } from "../../stores/types.js";
import type { Logger } from "../../util/logger.js";
import { digestBytesEqual, keyDigest } from "./key-material.js";

/** Options of {@link createKeyIndex}. */
export interface KeyIndexOptions {
  store: KeyStore;
  logger: Logger;
  /** How often the store's version is checked. @default 200 */
  pollMs?: number;
  /** Least time between two checks caused by unknown keys. @default 50 */
  minRecheckMs?: number;
  /** @default Date.now */
  now?: () => number;
}

/** What a presented key is. */
export type KeyLookup =
  | { status: "valid"; record: VirtualKeyRecord }
  | { status: "revoked" | "expired"; record: VirtualKeyRecord }
  | { status: "unknown" };

/** The server's key index. */
export interface KeyIndex {
  /** Whether any key record exists (revoked and expired ones count: once keys are used, they stay required). */
  hasKeys(): boolean;
  lookup(key: string): Promise<KeyLookup>;
  /** Reloads now if the store changed (tests and the admin API call it after a write). */
  refresh(): Promise<void>;
  /** Every key record as last loaded (revoked and expired ones included), without reading the store. */
  records(): VirtualKeyRecord[];
  /**
   * Calls `onGone` once, at the poll that sees it, when the key of `record` stops working: revoked, rotated or expired.
   * Returns what stops watching (the request ended).
   */
  watch(record: VirtualKeyRecord, onGone: (why: KeyGone) => void): () => void;
  /**
   * Calls `listener` once per key record, at the poll that sees it, when the record stops working for good: revoked
   * or expired (a rotation keeps the record, whose new key goes on). What the key left behind besides its running
   * requests (its parked turns) is let go then. Returns what stops listening.
   */
  onRecordGone(listener: (record: VirtualKeyRecord, why: "revoked" | "expired") => void): () => void;
  close(): void;
}

/** Why a key stopped working while a request ran on it. */
export type KeyGone = "revoked" | "rotated" | "expired";

/** Loads the keys and starts polling; resolves once the first load is done. */
export async function createKeyIndex(options: KeyIndexOptions): Promise<KeyIndex> {
  const { store, logger } = options;
  const now = options.now ?? Date.now;
  const pollMs = options.pollMs ?? 200;
  const minRecheckMs = options.minRecheckMs ?? 50;
  let byHash = new Map<string, VirtualKeyRecord>();
  /** The bytes of each hex digest loaded (a pure function of the hex, so never stale), for the comparison. */
  let digestBytes = new Map<string, Buffer>();
  let count = 0;
  let version: string | undefined;
  let running: Promise<void> | undefined;
  let lastCheck = 0;
  let failing = false;

  const load = async (): Promise<void> => {
    lastCheck = now();
    const current = await store.version();
    if (current === version) return;
    const records = await store.list();
    byHash = new Map(records.map((record) => [record.hash, record]));
    digestBytes = new Map(records.map((record) => [record.hash, Buffer.from(record.hash, "hex")]));
    count = records.length;
    if (version !== undefined) logger.info("virtual keys reloaded", { keys: count });
    version = current;
  };
  const refresh = (): Promise<void> => {
    running ??= load().finally(() => {
      running = undefined;
    });
    return running;
  };

  /** The requests running on a key, by the key's hash, and what each does when it stops working. */
  const watchers = new Map<string, Set<(why: KeyGone) => void>>();
  const checkWatched = () => {
    for (const [hash, callbacks] of watchers) {
      const record = byHash.get(hash);
      const why: KeyGone | undefined =
        record === undefined
          ? "rotated"
          : record.revokedAt !== undefined
            ? "revoked"
            : record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now()
              ? "expired"
              : undefined;
      if (why === undefined) continue;
      watchers.delete(hash);
      for (const callback of callbacks) callback(why);
    }
  };

  /** Listeners of {@link KeyIndex.onRecordGone}, and the ids of the records already reported (or gone at start). */
  const goneListeners = new Set<(record: VirtualKeyRecord, why: "revoked" | "expired") => void>();
  const reported = new Set<string>();
  const goneWhy = (record: VirtualKeyRecord): "revoked" | "expired" | undefined =>
    record.revokedAt !== undefined
      ? "revoked"
      : record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now()
        ? "expired"
        : undefined;
  /** The records seen by the last walk, and the earliest expiry of one not reported: no walk before then. */
  let walked: Map<string, VirtualKeyRecord> | undefined;
  let nextExpiry = Number.POSITIVE_INFINITY;
  const checkGone = () => {
    if (walked === byHash && now() < nextExpiry) return;
    walked = byHash;
    nextExpiry = Number.POSITIVE_INFINITY;
    for (const record of byHash.values()) {
      const why = goneWhy(record);
      if (reported.has(record.id)) {
        if (why !== undefined) continue;
        // Working again (an expired key given a later expiry): it is reported when it stops again.
        reported.delete(record.id);
      }
      if (why === undefined) {
        if (record.expiresAt !== undefined) nextExpiry = Math.min(nextExpiry, Date.parse(record.expiresAt));
        continue;
      }
      reported.add(record.id);
      for (const listener of goneListeners) listener(record, why);
    }
  };

  await refresh();
  // Nothing of a key already gone at start is left in this process.
  for (const record of byHash.values()) if (goneWhy(record) !== undefined) reported.add(record.id);
  const timer = setInterval(() => {
    refresh().then(
      () => {
        if (failing) logger.info("the key store is readable again");
        failing = false;
        if (watchers.size > 0) checkWatched();
        if (goneListeners.size > 0) checkGone();
      },
      (error: unknown) => {
        // Keep serving the last keys read; say so once, not every poll.
        if (!failing) logger.warn("could not read the key store; using the keys read last", { error });
        failing = true;
      },
    );
  }, pollMs);
  timer.unref();

  const find = (hash: string, digest: Buffer): VirtualKeyRecord | undefined => {
    const record = byHash.get(hash);
    if (record === undefined) return undefined;
    // The map finds the record by a hash of the key; the comparison that admits it is constant-time, against the
    // record's digest as it is now.
    const stored = digestBytes.get(record.hash) ?? Buffer.from(record.hash, "hex");
    return digestBytesEqual(stored, digest) ? record : undefined;
  };

  return {
    hasKeys: () => count > 0,
    async lookup(key) {
      const digest = keyDigest(key);
      const hash = digest.toString("hex");
      let record = find(hash, digest);
      if (record === undefined && now() - lastCheck >= minRecheckMs) {
        await refresh().catch(() => undefined);
        record = find(hash, digest);
      }
      if (record === undefined) return { status: "unknown" };
      if (record.revokedAt !== undefined) return { status: "revoked", record };
      if (record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now()) return { status: "expired", record };
      return { status: "valid", record };
    },
    refresh,
    records: () => [...byHash.values()],
    watch(record, onGone) {
      let callbacks = watchers.get(record.hash);
      if (callbacks === undefined) {
        callbacks = new Set();
        watchers.set(record.hash, callbacks);
      }
      const callback = (why: KeyGone) => onGone(why);
      callbacks.add(callback);
      return () => {
        const current = watchers.get(record.hash);
        current?.delete(callback);
        if (current?.size === 0) watchers.delete(record.hash);
      };
    },
    onRecordGone(listener) {
      goneListeners.add(listener);
      return () => goneListeners.delete(listener);
    },
    close: () => clearInterval(timer),
  };
}
