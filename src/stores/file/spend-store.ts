/**
 * The file {@link SpendStore} of a single instance: `<dataDir>/spend.json` (mode 0600, written atomically after every
 * finished request), read once at start and kept in memory; writes are serialized. Only the three newest periods of
 * each kind (day, week, month) are kept. A write the disk refuses (full, read-only, the directory gone) does not undo
 * the spend: it stays in memory, so budgets hold and answers say what was spent, and the file is written again every
 * {@link REWRITE_MS}, at the next settle and once more when the server stops ({@link SpendStore.close}) until the
 * disk takes it (logged when it fails and when it is written again). It used to be dropped and handed to the settle queue, whose file is on the same full disk: the cost of
 * every request served while the disk was full was lost. Reservations of running requests stay in memory (one
 * instance holds them; spend-reservations.ts): a reservation is checked and taken in one synchronous step against
 * the totals in memory, which every settle updates before it resolves.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ProxyError } from "../../util/errors.js";
import { type Logger, silentLogger } from "../../util/logger.js";
import { SpendReservations } from "../spend-reservations.js";
import { addSpend, spendFrom, zeroSpend } from "../spend-totals.js";
import type { RunningCost, SpendStore, SpendTotals } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";

/** File name inside the data directory. */
export const SPEND_FILE_NAME = "spend.json";

/** How often spend the disk refused is written again. */
export const REWRITE_MS = 2000;

/** Periods of each kind kept in the file. */
const KEPT_PER_KIND = 3;

type Periods = Map<string, Map<string, SpendTotals>>;

/** What the file holds: the periods, and the requests that were running at its last write. */
interface Loaded {
  periods: Periods;
  running: RunningCost[];
}

async function load(path: string): Promise<Loaded> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return { periods: new Map(), running: [] };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Never overwritten: the keys' spend would silently start again from zero.
    throw new ProxyError(
      "backend_unavailable",
      `The spend file ${path} is not valid JSON; fix it, or move it away and restart to count afresh.`,
      { cause: error, detail: "store_unavailable", retryable: false },
    );
  }
  const periods: Periods = new Map();
  const stored = (parsed as { periods?: unknown }).periods;
  if (typeof stored === "object" && stored !== null) {
    for (const [period, keys] of Object.entries(stored)) {
      if (typeof keys !== "object" || keys === null) continue;
      const totals = new Map<string, SpendTotals>();
      for (const [keyId, record] of Object.entries(keys))
        totals.set(keyId, spendFrom(record as Record<string, unknown>));
      periods.set(period, totals);
    }
  }
  const running: RunningCost[] = [];
  const runningStored = (parsed as { running?: unknown }).running;
  if (typeof runningStored === "object" && runningStored !== null) {
    for (const [id, record] of Object.entries(runningStored)) {
      const { keyId, period } = (record ?? {}) as { keyId?: unknown; period?: unknown };
      if (typeof keyId !== "string" || typeof period !== "string") continue;
      running.push({ id, keyId, period, entry: spendFrom(record as Record<string, unknown>) });
    }
  }
  return { periods, running };
}

/** Charges the requests a process that stopped without settling them recorded as running (a crash). */
function foldRunning(periods: Periods, running: readonly RunningCost[]): void {
  for (const { keyId, period, entry } of running) {
    const keys = periods.get(period) ?? new Map<string, SpendTotals>();
    periods.set(period, keys);
    keys.set(keyId, addSpend(keys.get(keyId) ?? zeroSpend(), entry));
  }
}

/** Drops all but the newest {@link KEPT_PER_KIND} periods of each kind (period ids sort by date within a kind). */
function prune(periods: Periods): void {
  const byKind = new Map<string, string[]>();
  for (const period of periods.keys()) {
    const kind = period.split(":")[0] ?? "";
    byKind.set(kind, [...(byKind.get(kind) ?? []), period]);
  }
  for (const list of byKind.values()) {
    for (const old of list.sort().slice(0, -KEPT_PER_KIND)) periods.delete(old);
  }
}

function serialize(periods: Periods, running: ReadonlyMap<string, RunningCost>): string {
  const out: Record<string, Record<string, SpendTotals>> = {};
  for (const [period, keys] of periods) out[period] = Object.fromEntries(keys);
  if (running.size === 0) return `${JSON.stringify({ version: 1, periods: out })}\n`;
  const open: Record<string, SpendTotals & { keyId: string; period: string }> = {};
  for (const [id, { keyId, period, entry }] of running) open[id] = { keyId, period, ...entry };
  return `${JSON.stringify({ version: 1, periods: out, running: open })}\n`;
}

/** Spend in `<dataDir>/spend.json`. */
export function createFileSpendStore(options: { dataDir: string; logger?: Logger; rewriteMs?: number }): SpendStore {
  const path = join(options.dataDir, SPEND_FILE_NAME);
  const logger = options.logger ?? silentLogger;
  let loaded: Promise<Periods> | undefined;
  const periods = () => {
    loaded ??= load(path).then(({ periods: all, running: left }) => {
      if (left.length > 0) {
        foldRunning(all, left);
        logger.warn("charged the requests that were running when the server last stopped without settling them", {
          path,
          requests: left.length,
        });
        // Written at once without them: a file still holding them would charge them again at the next start (a
        // second crash, or a clean stop before any request settles).
        void serialized(() => persist(all, left.length)).catch(() => undefined);
      }
      return all;
    });
    return loaded;
  };
  /** The running requests' costs as last noted (noteRunning), written with the periods. */
  let running = new Map<string, RunningCost>();
  /** A write of a new running set is queued and has not started yet. */
  let runningWriteQueued = false;
  const reservations = new SpendReservations();
  let queue: Promise<unknown> = Promise.resolve();
  /** Runs `work` after the writes before it (one at a time). */
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const result = queue.then(work, work);
    queue = result.catch(() => undefined);
    return result;
  };
  /** Changes in memory that the file does not hold yet (its write failed), and the timer writing them again. */
  let unwritten = 0;
  let rewrite: NodeJS.Timeout | undefined;
  /** Set by close(): a write that fails then is not retried (the process is stopping). */
  let closed = false;
  /** Writes the periods in memory; on failure keeps them there, to be written again (see the module comment). */
  const persist = async (all: Periods, changes: number) => {
    try {
      await writeFileAtomic(path, serialize(all, running));
    } catch (error) {
      if (unwritten === 0) {
        logger.error(
          "could not write the spend file; the spend stays in memory and is written when the disk takes it",
          {
            path,
            error,
          },
        );
      }
      unwritten += changes;
      if (rewrite === undefined && !closed) {
        const again = () => void serialized(() => persist(all, 0)).catch(() => undefined);
        rewrite = setInterval(again, options.rewriteMs ?? REWRITE_MS);
        rewrite.unref();
      }
      return;
    }
    if (unwritten > 0) logger.info("wrote the spend file again", { path, changes_held: unwritten });
    unwritten = 0;
    if (rewrite !== undefined) clearInterval(rewrite);
    rewrite = undefined;
  };
  /** Adds `entry` in memory and writes the file. */
  const add = async (keyId: string, period: string, entry: SpendTotals) => {
    const all = await periods();
    const before = all.get(period)?.get(keyId) ?? zeroSpend();
    const after = addSpend(before, entry);
    const keys = all.get(period) ?? new Map<string, SpendTotals>();
    all.set(period, keys);
    keys.set(keyId, after);
    prune(all);
    await persist(all, 1);
    return { before, after };
  };
  return {
    add(keyId, period, entry) {
      return serialized(() => add(keyId, period, entry));
    },
    async get(keyId, period) {
      return { ...((await periods()).get(period)?.get(keyId) ?? zeroSpend()) };
    },
    async reserve(input) {
      const spent = (await periods()).get(input.period)?.get(input.keyId) ?? zeroSpend();
      // Named fields, not a spread of the answer: spreading a fresh object into a literal costs ~0.4 µs.
      const { admitted, reservedMicroUsd } = reservations.reserve(input, spent.microUsd);
      return { admitted, reservedMicroUsd, spent: { ...spent } };
    },
    settle({ keyId, period, id, entry }) {
      return serialized(async () => {
        if (reservations.wasSettled(id)) {
          running.delete(id);
          const now = (await periods()).get(period)?.get(keyId) ?? zeroSpend();
          return { before: { ...now }, after: { ...now }, applied: false };
        }
        // Its real cost replaces what was recorded while it ran, in the same write.
        running.delete(id);
        const { before, after } = await add(keyId, period, entry);
        reservations.settle(keyId, period, id);
        return { before, after, applied: true };
      });
    },
    async renew(keyId, period, ids, now, leaseMs) {
      reservations.renew(keyId, period, ids, now, leaseMs);
    },
    noteRunning(list) {
      if (list.length === 0 && running.size === 0) return;
      running = new Map(list.map((cost) => [cost.id, cost]));
      if (runningWriteQueued || closed) return;
      runningWriteQueued = true;
      void serialized(async () => {
        runningWriteQueued = false;
        await persist(await periods(), 0);
      }).catch(() => undefined);
    },
    close() {
      closed = true;
      if (rewrite !== undefined) clearInterval(rewrite);
      rewrite = undefined;
      return serialized(async () => {
        // What the disk refused, and the requests still running (charged by a restart unless their settles follow).
        if ((unwritten === 0 && running.size === 0) || loaded === undefined) return;
        const held = unwritten;
        await persist(await loaded, 0);
        if (unwritten > 0)
          logger.error("stopping with spend the disk refused: it is lost", { path, changes_held: held });
      });
    },
  };
}
