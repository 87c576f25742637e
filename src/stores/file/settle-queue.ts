/**
 * The file {@link SettleQueue}: `<dataDir>/pending-settles.json` (mode 0600, written atomically at every change), so
 * a settle that failed while the shared store was down is retried after it returns, even across a restart of this
 * instance. Writes are serialized; the list stays small (only settles that failed). A change is made in memory first:
 * when the file cannot be written (a full disk) the change still fails, but what it queued is retried while this
 * process runs (only a restart before the disk takes a write loses it).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { spendFrom } from "../spend-totals.js";
import type { PendingSettle, SettleQueue } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";

/** File name inside the data directory. */
export const SETTLE_QUEUE_FILE_NAME = "pending-settles.json";

function parse(text: string): PendingSettle[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  const items = (parsed as { items?: unknown }).items;
  if (!Array.isArray(items)) return [];
  return items.flatMap((raw): PendingSettle[] => {
    const item = raw as Record<string, unknown>;
    if (typeof item.keyId !== "string" || typeof item.id !== "string" || typeof item.period !== "string") return [];
    return [
      {
        keyId: item.keyId,
        id: item.id,
        period: item.period,
        entry: spendFrom(item.entry as Record<string, unknown> | undefined),
        tokens: Number(item.tokens) || 0,
        finishedAt: Number(item.finishedAt) || 0,
        countersDone: item.countersDone === true,
      },
    ];
  });
}

/** Failed settles in `<dataDir>/pending-settles.json`. */
export function createFileSettleQueue(options: { dataDir: string }): SettleQueue {
  const path = join(options.dataDir, SETTLE_QUEUE_FILE_NAME);
  let loaded: Promise<PendingSettle[]> | undefined;
  const items = () => {
    loaded ??= readFile(path, "utf8").then(parse, (error: { code?: unknown }) => {
      if (error.code === "ENOENT") return [];
      throw error;
    });
    return loaded;
  };
  let queue: Promise<unknown> = Promise.resolve();
  const change = (edit: (list: PendingSettle[]) => PendingSettle[]) => {
    const run = async () => {
      const list = await items();
      list.splice(0, list.length, ...edit(list));
      await writeFileAtomic(path, `${JSON.stringify({ version: 1, items: list })}\n`);
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };
  return {
    push: (item) => change((list) => [...list.filter((kept) => kept.id !== item.id), item]),
    async list() {
      return (await items()).map((item) => ({ ...item, entry: { ...item.entry } }));
    },
    remove(ids) {
      const gone = new Set(ids);
      return change((list) => list.filter((item) => !gone.has(item.id)));
    },
  };
}
