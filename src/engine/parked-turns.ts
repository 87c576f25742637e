/**
 * Registry of Cursor turns parked on pending client tool calls, keyed by tool_call_id. A follow-up request whose `role:"tool"` messages answer every pending id
 * takes the turn out (single ownership: a turn is handed to exactly one request) and resumes it on the same stream.
 */
import { EXPIRED_REASON } from "../backend/turn-reasons.js";
import type { AgentTurn } from "../backend/types.js";
import { type Logger, silentLogger } from "../util/logger.js";
import type { ParkedOrigin } from "./parked-match.js";

/** What the registry remembers about a parked turn besides the turn itself. */
export interface ParkedEntry {
  turn: AgentTurn;
  conversationId: string;
  model: string;
  /** The request that parked it and the calls it handed out: only a request continuing that history resumes it. */
  origin: ParkedOrigin;
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
  /** Wall clock of {@link ParkedEntry.parkedAt}. @default Date.now */
  now?: () => number;
  /** Monotonic clock the TTL is measured on. @default performance.now */
  clock?: () => number;
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
   * `mayTake` false (another owner's turn): undefined, and the turn stays parked.
   */
  take(toolCallIds: readonly string[], mayTake?: (entry: ParkedEntry) => boolean): ParkedEntry | undefined;
  /**
   * Takes out the parked turn any of `toolCallIds` belongs to, whatever its other pending ids: a request that answers
   * it only in part has moved past it (the caller closes it). Undefined when none of them is parked.
   */
  release(toolCallIds: readonly string[], mayTake?: (entry: ParkedEntry) => boolean): ParkedEntry | undefined;
  /** Takes out every parked turn of `owner` (ParkedOrigin.owner): its owner is gone (the caller closes them). */
  releaseOwned(owner: string): ParkedEntry[];
  /** Number of parked turns. */
  size(): number;
  /** What is parked right now, oldest first (for the status page). */
  list(): ParkedTurnInfo[];
  /** Closes every parked turn (server shutdown). */
  closeAll(): Promise<void>;
}

/** A parked entry with what the registry needs to let it go. */
interface Slot extends ParkedEntry {
  /** The ids it was parked under (the turn's own list empties once it is no longer parked). */
  ids: readonly string[];
  /** {@link ParkedTurnRegistryOptions.clock} reading at which it expires. */
  dueAt: number;
}

/**
 * Creates an in-memory registry whose entries close themselves after the TTL. Every entry has the same TTL, so they
 * expire in the order they parked: one timer, armed for the oldest, serves them all (rather than a timer and its
 * closure per parked turn: thousands may be parked).
 */
export function createParkedTurnRegistry(options: ParkedTurnRegistryOptions = {}): ParkedTurnRegistry {
  const ttlMs = options.ttlMs ?? 15 * 60_000;
  const now = options.now ?? Date.now;
  const clock = options.clock ?? (() => performance.now());
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
  const clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  const maxEntries = options.maxEntries ?? 5000;
  const logger = options.logger ?? silentLogger;
  const byId = new Map<string, Slot>();
  /** Oldest first (insertion order), which is also the order they expire in. */
  const slots = new Set<Slot>();
  let timer: unknown;
  /** When the armed timer fires (clock reading); meaningful while `timer` is set. */
  let timerDueAt = 0;

  const remove = (slot: Slot) => {
    for (const id of slot.ids) if (byId.get(id) === slot) byId.delete(id);
    slots.delete(slot);
  };

  const disarm = () => {
    if (timer !== undefined) clearTimer(timer);
    timer = undefined;
  };

  /** Arms the timer for the oldest entry, unless one already fires by then (it re-arms when it fires). */
  const arm = () => {
    const oldest = slots.values().next().value;
    if (oldest === undefined) {
      disarm();
      return;
    }
    if (timer !== undefined && timerDueAt <= oldest.dueAt) return;
    disarm();
    timerDueAt = oldest.dueAt;
    timer = setTimer(expire, Math.max(1, Math.ceil(oldest.dueAt - clock())));
  };

  function expire(): void {
    timer = undefined;
    const at = clock();
    for (const slot of slots) {
      if (slot.dueAt > at) break;
      remove(slot);
      void slot.turn.close(EXPIRED_REASON);
    }
    arm();
  }

  return {
    park(input) {
      const ids = input.turn.pendingToolCallIds;
      // One literal, not a spread of `input` plus three keys: a key added to a spread copy costs every slot a hidden
      // class of its own (a map and its descriptors, about 0.25 KB per parked turn).
      const slot: Slot = {
        turn: input.turn,
        conversationId: input.conversationId,
        model: input.model,
        origin: input.origin,
        parkedAt: now(),
        ids,
        dueAt: clock() + ttlMs,
      };
      for (const id of ids) byId.set(id, slot);
      slots.add(slot);
      // A turn that ends while parked (its Run died, Cursor closed a call) is let go at once, not at its TTL.
      input.turn.onEnd?.(() => remove(slot));
      // Over the cap: the oldest parked turn is closed; its conversation continues from its checkpoint later.
      while (slots.size > maxEntries) {
        const oldest = slots.values().next().value;
        if (oldest === undefined) break;
        remove(oldest);
        logger.info("closing the oldest parked turn: too many parked turns", { maxEntries });
        void oldest.turn.close("too many parked turns");
      }
      arm();
    },
    take(toolCallIds, mayTake) {
      const first = toolCallIds[0];
      const slot = first === undefined ? undefined : byId.get(first);
      if (!slot || mayTake?.(slot) === false) return undefined;
      const pending = new Set(slot.turn.pendingToolCallIds);
      const exact = pending.size === toolCallIds.length && toolCallIds.every((id) => pending.has(id));
      if (!exact || slot.turn.status !== "parked") {
        if (slot.turn.status !== "parked") remove(slot);
        return undefined;
      }
      remove(slot);
      slot.turn.onEnd?.(undefined);
      return slot;
    },
    release(toolCallIds, mayTake) {
      for (const id of toolCallIds) {
        const slot = byId.get(id);
        if (slot === undefined || mayTake?.(slot) === false) continue;
        remove(slot);
        slot.turn.onEnd?.(undefined);
        return slot;
      }
      return undefined;
    },
    releaseOwned(owner) {
      const owned: ParkedEntry[] = [];
      for (const slot of slots) {
        if (slot.origin.owner !== owner) continue;
        remove(slot);
        slot.turn.onEnd?.(undefined);
        owned.push(slot);
      }
      if (owned.length > 0) arm();
      return owned;
    },
    size: () => slots.size,
    list: () =>
      [...slots].map((slot) => ({
        model: slot.model,
        parkedAt: slot.parkedAt,
        pendingToolCalls: slot.turn.pendingToolCallIds.length,
      })),
    async closeAll() {
      const all = [...slots];
      for (const slot of all) remove(slot);
      disarm();
      await Promise.allSettled(all.map((slot) => slot.turn.close("server shutting down")));
    },
  };
}
