/**
 * The REST endpoints current clients call on the API host with the raw API key (cursor-protocol-addendum-2.md §9):
 * `GET /v1/models` (`{items: ModelListItem[]}`), `GET /v1/me` (who the key belongs to) and
 * `GET /v1/agents/{id}/usage[?runId=]` (`{usage, cost, runs[]}` from the runs' `turn_ended` counts); shapes in
 * docs/protocol.md §1.2.
 */
import type { Authority, NodeRequest, NodeResponse } from "./auth.js";
import { sendJson } from "./auth.js";
import type { ModelCatalogue } from "./models.js";

/** Token counts of one run or a sum of runs. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** What a run costs, in cents as floats (cursor-protocol-addendum-3.md U6: `rawCostCents`, `chargedCents`). */
export interface RunCost {
  rawCostCents: number;
  chargedCents: number;
}

/** One run of `GET /v1/agents/{id}/usage`. */
export interface RunUsage {
  runId: string;
  usage: TokenUsage;
  cost: RunCost;
}

/**
 * The emulator's price of a completed run: 2 cents, the same the plan usage (`GetCurrentPeriodUsage`) counts per
 * turn; nothing is discounted, so `chargedCents` = `rawCostCents`.
 */
export const CENTS_PER_RUN = 2;

const ZERO: TokenUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
};

function sumOf(runs: readonly RunUsage[]): { usage: TokenUsage; cost: RunCost } {
  const usage = { ...ZERO };
  const cost = { rawCostCents: 0, chargedCents: 0 };
  for (const run of runs) {
    for (const key of Object.keys(usage) as (keyof TokenUsage)[]) usage[key] += run.usage[key];
    cost.rawCostCents += run.cost.rawCostCents;
    cost.chargedCents += run.cost.chargedCents;
  }
  return { usage, cost };
}

/** Per-agent runs, bounded (the oldest agent is forgotten first). */
export class UsageLedger {
  private readonly byAgent = new Map<string, RunUsage[]>();

  constructor(private readonly maxAgents = 10_000) {}

  add(agentId: string, runId: string, counts: TokenUsage): void {
    if (agentId === "") return;
    const runs = this.byAgent.get(agentId) ?? [];
    this.byAgent.delete(agentId);
    runs.push({ runId, usage: { ...counts }, cost: { rawCostCents: CENTS_PER_RUN, chargedCents: CENTS_PER_RUN } });
    this.byAgent.set(agentId, runs);
    for (const oldest of this.byAgent.keys()) {
      if (this.byAgent.size <= this.maxAgents) break;
      this.byAgent.delete(oldest);
    }
  }

  /** U6's `{usage, cost, runs}` for an agent, or for one of its runs; undefined when either is unknown. */
  get(agentId: string, runId?: string): { usage: TokenUsage; cost: RunCost; runs: RunUsage[] } | undefined {
    const all = this.byAgent.get(agentId);
    if (all === undefined) return undefined;
    const runs = runId === undefined ? all : all.filter((run) => run.runId === runId);
    if (runs.length === 0) return undefined;
    return { ...sumOf(runs), runs: structuredClone(runs) };
  }
}

const AGENT_USAGE = /^\/v1\/agents\/([^/]+)\/usage$/;

/** Serves the REST routes; false when the path is not one of them. */
export function handleRest(
  req: NodeRequest,
  res: NodeResponse,
  deps: { authority: Authority; models: ModelCatalogue; usage: UsageLedger },
): boolean {
  const url = new URL(req.url ?? "/", "http://emulator.local");
  const path = url.pathname;
  const agent = AGENT_USAGE.exec(path);
  if (path !== "/v1/models" && path !== "/v1/me" && agent === null) return false;
  if (req.method !== "GET") {
    sendJson(res, 405, { error: `Use GET ${path}.` });
    return true;
  }
  const caller = deps.authority.authenticateRest(req.headers.authorization ?? null);
  if (caller === undefined) {
    sendJson(res, 401, { error: "Missing or invalid API key." });
    return true;
  }
  if (path === "/v1/me") {
    sendJson(res, 200, {
      apiKeyName: caller.apiKeyName ?? "",
      createdAt: caller.createdAt,
      userEmail: caller.identity.email ?? "",
      userId: caller.identity.userId,
    });
    return true;
  }
  if (agent === null) {
    sendJson(res, 200, { items: deps.models.listItems() });
    return true;
  }
  let id: string;
  try {
    id = decodeURIComponent(agent[1] ?? "");
  } catch {
    sendJson(res, 400, { error: "Malformed agent id." });
    return true;
  }
  const runId = url.searchParams.get("runId") || undefined;
  const usage = deps.usage.get(id, runId);
  if (usage === undefined) {
    sendJson(res, 404, {
      error: runId === undefined ? `Agent ${id} not found.` : `Run ${runId} of agent ${id} not found.`,
    });
  } else sendJson(res, 200, usage);
  return true;
}
