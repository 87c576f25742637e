/**
 * Refused admin requests (401, `anonymous`) from one peer are written to the audit log once per window: the first
 * is written as it comes, the ones after it within {@link REFUSAL_WINDOW_MS} only counted, and their count written
 * as one entry (`detail.repeated`, `detail.since`) when the window ends, or when the server stops. A client looping on a wrong admin key then
 * adds about one line a minute instead of one a request. At most {@link MAX_TRACKED_PEERS} peers are tracked at
 * once; refusals from a peer beyond them are written one by one, as before.
 */
import type { AuditEntry, AuditLog } from "../../stores/types.js";

/** The window over which one peer's refusals are counted into one entry. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Peers tracked at once. */
export const MAX_TRACKED_PEERS = 1024;

interface Window {
  /** Refusals counted but not written yet. */
  repeated: number;
  /** The first of them. */
  since: string;
  /** The last of them, whose fields the count's entry carries. */
  last: AuditEntry | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** What the admin app calls for each refused request. */
export interface RefusalAudit {
  refused(entry: AuditEntry, peer: string): Promise<void>;
  /** Writes the counts of every open window now and stops counting (the server is stopping). */
  flush(): Promise<void>;
}

/** A refusal collapser writing through `write`, which appends to the audit log and never rejects (it logs). */
export function createRefusalAudit(write: AuditLog["append"]): RefusalAudit {
  const windows = new Map<string, Window>();
  const close = async (peer: string, window: Window) => {
    if (windows.get(peer) === window) windows.delete(peer);
    clearTimeout(window.timer);
    if (window.repeated === 0 || window.last === undefined) return;
    const { last } = window;
    await write({ ...last, detail: { ...last.detail, repeated: window.repeated, since: window.since } });
  };
  return {
    async refused(entry, peer) {
      const current = windows.get(peer);
      if (current !== undefined) {
        current.repeated += 1;
        if (current.repeated === 1) current.since = entry.at;
        current.last = entry;
        return;
      }
      if (windows.size < MAX_TRACKED_PEERS) {
        const window: Window = { repeated: 0, since: entry.at, last: undefined, timer: undefined };
        windows.set(peer, window);
        window.timer = setTimeout(() => void close(peer, window), REFUSAL_WINDOW_MS);
        window.timer.unref?.();
      }
      await write(entry);
    },
    async flush() {
      await Promise.all([...windows].map(([peer, window]) => close(peer, window)));
    },
  };
}
