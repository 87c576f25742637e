/**
 * Registry of Cursor turns parked on pending client tool calls, keyed by tool_call_id. A follow-up request whose `role:"tool"` messages answer every pending id
 * takes the turn out (single ownership: a turn is handed to exactly one request) and resumes it on the same stream.
 */
import { EXPIRED_REASON } from "../backend/turn-reasons.js";
import type { AgentTurn } from "../backend/types.js";
import { type Logger, silentLogger } from "../util/logger.js";

/** What the registry remembers about a parked turn besides the turn itself. */
export interface ParkedEntry {
  turn: AgentTurn;
  conversationId: string;
  model: string;
  parkedAt: number;
}

/** A printable summary of one parked turn. */
export interface ParkedTurnInfo {
  model: string;
  parkedAt: number;
  /** How many tool calls it waits for. */
  pendingToolCalls: number;
}

/** Options of {@link createParkedTurnRegistry}. */
export interface ParkedTurnRegistryOptions {
  /** How long a parked turn may wait for its results before it is closed. @default 15 minutes */
  ttlMs?: number | undefined;
  /** @default Date.now */
  now?: () => number;
  /** Timer functions, injectable for tests. @default globalThis.setTimeout/clearTimeout */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  /** Most turns parked at once; parking one more closes the oldest. @default 5000 */
  maxEntries?: number | undefined;
  logger?: Logger;
}

/** Parked turns by tool call id. */
export interface ParkedTurnRegistry {
  /** Parks a turn under every one of its pending tool call ids. */
  park(entry: Omit<ParkedEntry, "parkedAt">): void;
  /**
   * Takes the turn whose pending ids are exactly `toolCallIds` (order-insensitive). Returns undefined when no parked
   * turn matches, when only some ids match (the caller must then rebuild), or when the turn is no longer parked.
   */
  take(toolCallIds: readonly string[]): ParkedEntry | undefined;
  /** Number of parked turns. */
  size(): number;
  /** What is parked right now, oldest first (for the status page). */
  list(): ParkedTurnInfo[];
  /** Closes every parked turn (server shutdown). */
  closeAll(): Promise<void>;
}

/** Creates an in-memory registry whose entries close themselves after the TTL. */
export function createParkedTurnRegistry(options: ParkedTurnRegistryOptions = {}): ParkedTurnRegistry {
  const ttlMs = options.ttlMs ?? 15 * 60_000;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
  const clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  const maxEntries = options.maxEntries ?? 5000;
  const logger = options.logger ?? silentLogger;
  const byId = new Map<string, ParkedEntry>();
  const timers = new Map<ParkedEntry, unknown>();

  const remove = (entry: ParkedEntry) => {
    for (const id of entry.turn.pendingToolCallIds) if (byId.get(id) === entry) byId.delete(id);
    for (const [id, value] of byId) if (value === entry) byId.delete(id);
    const timer = timers.get(entry);
    if (timer !== undefined) clearTimer(timer);
    timers.delete(entry);
  };

  return {
    park(input) {
      const entry: ParkedEntry = { ...input, parkedAt: now() };
      for (const id of input.turn.pendingToolCallIds) byId.set(id, entry);
      timers.set(
        entry,
        setTimer(() => {
          remove(entry);
          void entry.turn.close(EXPIRED_REASON);
        }, ttlMs),
      );
      // Over the cap: the oldest parked turn is closed; its conversation continues from its checkpoint later.
      while (timers.size > maxEntries) {
        const oldest = timers.keys().next().value;
        if (oldest === undefined) break;
        remove(oldest);
        logger.info("closing the oldest parked turn: too many parked turns", { maxEntries });
        void oldest.turn.close("too many parked turns");
      }
    },
    take(toolCallIds) {
      const first = toolCallIds[0];
      const entry = first === undefined ? undefined : byId.get(first);
      if (!entry) return undefined;
      const pending = new Set(entry.turn.pendingToolCallIds);
      const exact = pending.size === toolCallIds.length && toolCallIds.every((id) => pending.has(id));
      if (!exact || entry.turn.status !== "parked") {
        if (entry.turn.status !== "parked") remove(entry);
        return undefined;
      }
      remove(entry);
      return entry;
    },
    size: () => timers.size,
    list: () =>
      [...timers.keys()].map((entry) => ({
        model: entry.model,
        parkedAt: entry.parkedAt,
        pendingToolCalls: entry.turn.pendingToolCallIds.length,
      })),
    async closeAll() {
      const entries = [...timers.keys()];
      for (const entry of entries) remove(entry);
      await Promise.allSettled(entries.map((entry) => entry.turn.close("server shutting down")));
    },
  };
}
