/** The in-memory {@link SettleQueue} (tests; a server keeps its queue on disk: stores/file/settle-queue.ts). */
import type { PendingSettle, SettleQueue } from "../types.js";

/** Failed settles kept in this process. */
export function createMemorySettleQueue(): SettleQueue {
  let items: PendingSettle[] = [];
  return {
    async push(item) {
      items = [...items.filter((kept) => kept.id !== item.id), item];
    },
    async list() {
      return items.map((item) => ({ ...item, entry: { ...item.entry } }));
    },
    async remove(ids) {
      const gone = new Set(ids);
      items = items.filter((item) => !gone.has(item.id));
    },
  };
}
