/**
 * Gives memory back after load. V8 grows the heap under load and, in a server that then goes quiet, keeps it: after
 * a 2 × 60 s soak at 150 concurrent requests the process stayed at 656 MB RSS (from 77 MB) for as long as it idled,
 * because nothing allocates any more to trigger the collections that would shrink it. Node cannot lower the heap
 * ceiling of a running process (`--max-old-space-size` applies at start only), so instead, once no request has been
 * in flight for {@link IDLE_MS} after a busy spell, and the heap with the memory its objects hold outside it (Buffers,
 * ArrayBuffers: {@link heldBytes}) is larger than {@link HEAP_THRESHOLD_BYTES}, two full collections run, the second
 * one compacting ({@link compactingGc}); V8 then releases the pages it no longer needs and the external memory of the
 * objects it frees. At most once per {@link MIN_INTERVAL_MS} after a busy spell, and never while a request is in
 * flight (it pauses the process: 0.4–1.1 s after the bench's soak on a busy 2-core machine). Freed blocks the C allocator keeps for reuse stay in RSS (Node has no
 * `malloc_trim`): after 30 requests of 3.9 MB, glibc's heap held 143–176 MB with V8's heap down to 56 MB.
 *
 * What a busy spell leaves is not all garbage {@link IDLE_MS} after it: the clients' kept-alive connections (closed by
 * the listener's keep-alive timeout, 5 s) and what expires later still hold memory then. So while the server stays
 * quiet and what it holds is still over the threshold, the collection is repeated, up to {@link FOLLOW_UPS} more
 * times per busy spell: {@link FOLLOW_UP_MS} later while the last one gave back a quarter or more, else
 * {@link MIN_INTERVAL_MS} later (after the bench's soak, one collection left 631 MB of RSS, one more 30 s later
 * brought a run of the same soak from 622 to 342 MB).
 */
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "../util/logger.js";

/**
 * Ten seconds, not three: a collection shrinks the heap and the young generation, and the next burst pays for growing
 * them back (the bench's CPU-per-request readings: the 1,000 turns right after a collection cost 2,100 and 2,250 ms of
 * CPU, the others 1,180–1,350). Agents send their turns seconds apart, so a 3 s quiet collected between the bursts of
 * one busy spell; memory still comes back well within the minute the memory budget allows.
 */
export const IDLE_MS = 10_000;
export const MIN_INTERVAL_MS = 30_000;
export const HEAP_THRESHOLD_BYTES = 96 * 1024 * 1024;
/** Collections after the first, while the server stays quiet and still holds more than the threshold. */
export const FOLLOW_UPS = 2;
/**
 * How soon a follow-up comes when the collection before it gave back at least a quarter of what was held (else
 * {@link MIN_INTERVAL_MS}). V8 shrinks the young generation (two 16 MB semi-spaces after load) only at a collection
 * that finds the allocation rate low, which the first one after load does not (what it sees includes the load's tail):
 * after the bench's soak the young generation went back from 32 to 1 MB at the follow-up, 30 s later than needed.
 */
export const FOLLOW_UP_MS = 10_000;

/**
 * The JS heap plus the external memory its objects hold (Buffers, ArrayBuffers): the bytes of large request bodies and
 * encoded messages live outside the heap and are freed only when a collection frees the objects that own them, so a
 * small heap holding large garbage Buffers is worth collecting too.
 */
export function heldBytes(): number {
  const stats = getHeapStatistics();
  return stats.total_heap_size + stats.external_memory;
}

export interface IdleMemoryOptions {
  logger: Logger;
  idleMs?: number;
  minIntervalMs?: number;
  /** @default {@link FOLLOW_UP_MS} */
  followUpMs?: number;
  heapThresholdBytes?: number;
  /**
   * One full collection; `compact` asks for one that also moves the surviving objects together ({@link compactingGc}).
   * @default global.gc, or one obtained without --expose-gc
   */
  collect?: (compact: boolean) => void;
  /** @default {@link heldBytes} */
  heapBytes?: () => number;
  now?: () => number;
}

export interface IdleMemory {
  /** A request started. */
  begin(): void;
  /** A request ended. */
  end(): void;
  /** Collections run so far. */
  readonly collections: number;
  close(): void;
}

/** A full-collection function without starting Node with --expose-gc (a fresh context sees `gc` while the flag is on). */
function exposedGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === "function") return existing;
  try {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as unknown;
    setFlagsFromString("--no-expose-gc");
    return typeof gc === "function" ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/** The user asked V8 to compact at every full collection: then it must stay on. */
const COMPACTS_ALWAYS = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((option) =>
  /compact[-_]on[-_]every[-_]full[-_]gc/.test(option),
);

/** V8's old generation: bytes committed and bytes its live objects take. */
export interface OldSpace {
  committed: number;
  used: number;
}

/** The old generation's figures as V8 reports them now. */
export function readOldSpace(): OldSpace {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "old_space");
  return { committed: space?.space_size ?? 0, used: space?.space_used_size ?? 0 };
}

/** At least 16 MB and a quarter of the old space free: compacting it gives memory back worth its pause. */
export function worthCompacting({ committed, used }: OldSpace): boolean {
  const free = committed - used;
  return free >= 16 * 1024 * 1024 && free >= committed / 4;
}

/**
 * `gc`, or with `compact` a full collection that also compacts the old generation: V8 evacuates only the pages its
 * heuristics pick, so after load the survivors stay scattered over pages it cannot give back (measured after the
 * bench's soak: 260 MB of old space committed for 95 MB of live objects, two plain collections later). With
 * `--compact-on-every-full-gc` on for that one collection, every page is a candidate and the freed ones are
 * unmapped (a fragmented 260 MB old space went to 107 MB in a test of the same shape, for about the cost of the plain
 * pair). The flag is read at each collection, so it is set for the one call and cleared after it. It moves every
 * live object, so it costs about as much on a heap that is not fragmented (after the soak, 0.8 s for a follow-up
 * that gave back 2 MB on a busy machine): only an old space with {@link worthCompacting} free room is compacted.
 */
export function compactingGc(gc: () => void, oldSpace: () => OldSpace = readOldSpace): (compact: boolean) => void {
  return (compact) => {
    if (!compact || COMPACTS_ALWAYS || !worthCompacting(oldSpace())) {
      gc();
      return;
    }
    setFlagsFromString("--compact-on-every-full-gc");
    try {
      gc();
    } finally {
      setFlagsFromString("--no-compact-on-every-full-gc");
    }
  };
}

function fullCollection(): ((compact: boolean) => void) | undefined {
  const gc = exposedGc();
  return gc === undefined ? undefined : compactingGc(gc);
}

export function createIdleMemory(options: IdleMemoryOptions): IdleMemory {
  const idleMs = options.idleMs ?? IDLE_MS;
  const minIntervalMs = options.minIntervalMs ?? MIN_INTERVAL_MS;
  const followUpMs = options.followUpMs ?? FOLLOW_UP_MS;
  const threshold = options.heapThresholdBytes ?? HEAP_THRESHOLD_BYTES;
  const heapBytes = options.heapBytes ?? heldBytes;
  const now = options.now ?? Date.now;
  let collect = options.collect;
  let inFlight = 0;
  let busySinceCollection = false;
  /** Follow-up collections still allowed in this quiet spell. */
  let followUps = 0;
  let lastCollection = Number.NEGATIVE_INFINITY;
  let collections = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  /** `interval`: the least time since the last collection ({@link FOLLOW_UP_MS} for a follow-up that may come soon). */
  const maybeCollect = (interval = minIntervalMs) => {
    timer = undefined;
    if (closed || inFlight > 0 || !busySinceCollection) return;
    const wait = lastCollection + interval - now();
    if (wait > 0) {
      timer = setTimeout(() => maybeCollect(interval), wait);
      timer.unref();
      return;
    }
    const before = heapBytes();
    if (before < threshold) return;
    collect ??= fullCollection();
    if (collect === undefined) return;
    const started = now();
    // Twice: the first collection frees the garbage (and finishes any marking the load started), the second (with
    // the heap now mostly empty) compacts what survived, after which V8 lowers its limits and uncommits the pages.
    collect(false);
    collect(true);
    lastCollection = now();
    collections += 1;
    const after = heapBytes();
    // Still holding more than the threshold: look again later, while nothing runs, a bounded number of times.
    busySinceCollection = after >= threshold && followUps > 0;
    if (busySinceCollection) {
      followUps -= 1;
      const next = before - after >= before / 4 ? Math.min(followUpMs, minIntervalMs) : minIntervalMs;
      timer = setTimeout(() => maybeCollect(next), next);
      timer.unref();
    }
    const usage = process.memoryUsage();
    const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
    options.logger.debug("released memory after load", {
      held_before_mb: mb(before),
      held_after_mb: mb(after),
      rss_mb: mb(usage.rss),
      external_mb: mb(usage.external),
      array_buffers_mb: mb(usage.arrayBuffers),
      ms: lastCollection - started,
    });
  };

  return {
    begin() {
      inFlight += 1;
      busySinceCollection = true;
      followUps = FOLLOW_UPS;
      if (timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
    end() {
      inFlight = Math.max(0, inFlight - 1);
      if (inFlight > 0 || closed) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = setTimeout(() => maybeCollect(), idleMs);
      timer.unref();
    },
    get collections() {
      return collections;
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
