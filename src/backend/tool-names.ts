/**
 * Tool names and tool-call ids as the model sees them. Caller tool names may contain characters or lengths model
 * providers reject, so each is sanitised to `[a-zA-Z0-9_-]{1,64}` (unique within one turn) and mapped back exactly
 * when the model calls it (docs/protocol.md §5.2; §9 item 7 leaves the accepted name format open, so we stay
 * inside the strictest common subset).
 */
import type { ClientTool } from "./types.js";

/** Longest tool name accepted by the strictest model providers. */
export const MAX_TOOL_NAME_LENGTH = 64;

const UNSAFE_NAME_CHARS = /[^a-zA-Z0-9_-]/g;

/** Bidirectional mapping between caller tool names and the names declared to Cursor. */
export interface ToolNameMap {
  /** The declared (sanitised) name for a caller tool name; undefined for unknown tools. */
  toModel(callerName: string): string | undefined;
  /** The caller's exact tool name for a declared name; undefined for names we never declared. */
  toCaller(modelName: string): string | undefined;
  /** Every caller name with its declared name, in declaration order. */
  readonly entries: ReadonlyArray<readonly [callerName: string, modelName: string]>;
}

/** Sanitises one name without regard to uniqueness. */
export function sanitizeToolName(name: string): string {
  const cleaned = name.replace(UNSAFE_NAME_CHARS, "_").slice(0, MAX_TOOL_NAME_LENGTH);
  return cleaned.length > 0 ? cleaned : "tool";
}

/**
 * `base`, or `base` with the first numeric suffix not `taken`. `next` remembers per base where to go on from, so a
 * turn whose many names sanitise alike costs linear time, not quadratic.
 */
function uniqueName(base: string, taken: ReadonlySet<string>, next: Map<string, number>): string {
  if (!taken.has(base)) return base;
  for (let n = next.get(base) ?? 2; ; n += 1) {
    const suffix = `_${n}`;
    const candidate = `${base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) {
      next.set(base, n + 1);
      return candidate;
    }
  }
}

/**
 * Builds the mapping for one turn's tools. Duplicate caller names keep their first declaration; names that collide
 * after sanitising get a numeric suffix (`_2`, `_3`…).
 */
export function createToolNameMap(callerNames: readonly string[]): ToolNameMap {
  const toModel = new Map<string, string>();
  const toCaller = new Map<string, string>();
  const entries: Array<readonly [string, string]> = [];
  // The declared names so far (toCaller's keys), kept as one set: a copy per tool made long lists quadratic.
  const taken = new Set<string>();
  const next = new Map<string, number>();
  for (const callerName of callerNames) {
    if (toModel.has(callerName)) continue;
    const modelName = uniqueName(sanitizeToolName(callerName), taken, next);
    taken.add(modelName);
    toModel.set(callerName, modelName);
    toCaller.set(modelName, callerName);
    entries.push([callerName, modelName]);
  }
  return {
    toModel: (name) => toModel.get(name),
    toCaller: (name) => toCaller.get(name),
    entries,
  };
}

const UNSAFE_ID_CHARS = /[^a-zA-Z0-9_.:-]/g;

/**
 * Makes a tool-call id safe to hand to OpenAI clients and unique across every turn this process has parked:
 * whitespace and unusual characters become `_` (FIN sanitises ids the same way, commit 432c376, §8), and a random
 * suffix is always added. Cursor's own ids (`call_` + 8 digits, §4.6) can repeat across conversations, and the
 * server finds a parked turn by the ids its follow-up answers, so a shared id would resume the wrong conversation.
 * `suffix` (several instances sharing a store) names the instance holding the turn, so a result reaching another
 * instance can be forwarded to it.
 */
export function sanitizeToolCallId(
  id: string,
  randomHex: () => string,
  taken: ReadonlySet<string>,
  suffix = "",
): string {
  const base = id.trim().replace(UNSAFE_ID_CHARS, "_") || "call";
  let candidate = `${base}_${randomHex().slice(0, 12)}${suffix}`;
  while (taken.has(candidate)) candidate = `${base}_${randomHex().slice(0, 12)}${suffix}`;
  return candidate;
}

/**
 * Tool-name maps by tool list. The agent client interns tool lists (tool-list-cache.ts), so turns with the same tools
 * share one immutable map instead of holding two Maps each while parked (thousands of turns may be parked).
 */
const toolNameMaps = new WeakMap<readonly ClientTool[], ToolNameMap>();

export function toolNameMapFor(tools: readonly ClientTool[]): ToolNameMap {
  let map = toolNameMaps.get(tools);
  if (map === undefined) {
    map = createToolNameMap(tools.map((tool) => tool.name));
    toolNameMaps.set(tools, map);
  }
  return map;
}
