/**
 * Clients declare the same tools on every request, and every turn (parked ones too, for up to the parked-turn TTL)
 * keeps its tool list for the request context and exec redirects (docs/protocol.md §5.2). Interning identical lists
 * lets those turns share one read-only copy instead of holding a parsed copy each.
 */
import type { ClientTool } from "./types.js";

/** Interns tool lists by content. */
export interface ToolListCache {
  /**
   * The cached list equal to `tools` (same names, descriptions and schemas, same order), or `tools` itself; every empty
   * list is one shared empty list (so the request context built for a request without tools is reused too).
   */
  intern(tools: ClientTool[]): ClientTool[];
}

/** Creates a cache holding at most `capacity` distinct lists (least recently used dropped first). */
export function createToolListCache(capacity = 32): ToolListCache {
  const lists = new Map<string, ClientTool[]>();
  const none: ClientTool[] = [];
  return {
    intern(tools) {
      if (tools.length === 0) return none;
      const key = JSON.stringify(tools);
      const cached = lists.get(key);
      if (cached !== undefined) {
        // Re-insert: Map order is the recency order.
        lists.delete(key);
        lists.set(key, cached);
        return cached;
      }
      lists.set(key, tools);
      if (lists.size > capacity) {
        const oldest = lists.keys().next();
        if (oldest.done !== true) lists.delete(oldest.value);
      }
      return tools;
    },
  };
}
