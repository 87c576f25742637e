/**
 * The REST endpoints current clients call on the API host with the raw API key (cursor-protocol-addendum-2.md §9):
 * `GET /v1/models` (`{items: ModelListItem[]}`, docs/protocol.md §1.2) and `GET /v1/agents/{id}/usage` (what the
 * emulator counted for that conversation: the sums of its turns' `turn_ended` counts).
 */
import type { Authority, NodeRequest, NodeResponse } from "./auth.js";
import { sendJson } from "./auth.js";
import type { ModelCatalogue } from "./models.js";

/** Token counts of one conversation, summed over its turns. */
export interface AgentUsage {
  turns: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** Per-conversation usage, bounded (the oldest conversation is forgotten first). */
export class UsageLedger {
  private readonly byAgent = new Map<string, AgentUsage>();

  constructor(private readonly maxAgents = 10_000) {}

  add(agentId: string, counts: Omit<AgentUsage, "turns">): void {
    if (agentId === "") return;
    const current = this.byAgent.get(agentId);
    this.byAgent.delete(agentId);
    const next: AgentUsage = { turns: 1, ...counts };
    if (current !== undefined) {
      next.turns += current.turns;
      next.inputTokens += current.inputTokens;
      next.outputTokens += current.outputTokens;
      next.cacheReadTokens += current.cacheReadTokens;
      next.cacheWriteTokens += current.cacheWriteTokens;
      next.reasoningTokens += current.reasoningTokens;
    }
    this.byAgent.set(agentId, next);
    for (const oldest of this.byAgent.keys()) {
      if (this.byAgent.size <= this.maxAgents) break;
      this.byAgent.delete(oldest);
    }
  }

  get(agentId: string): AgentUsage | undefined {
    return this.byAgent.get(agentId);
  }
}

const AGENT_USAGE = /^\/v1\/agents\/([^/]+)\/usage$/;

/** Serves the REST routes; false when the path is not one of them. */
export function handleRest(
  req: NodeRequest,
  res: NodeResponse,
  deps: { authority: Authority; models: ModelCatalogue; usage: UsageLedger },
): boolean {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const agent = AGENT_USAGE.exec(path);
  if (path !== "/v1/models" && agent === null) return false;
  if (req.method !== "GET") {
    sendJson(res, 405, { error: `Use GET ${path}.` });
    return true;
  }
  if (!deps.authority.authenticateRest(req.headers.authorization ?? null)) {
    sendJson(res, 401, { error: "Missing or invalid API key." });
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
  const usage = deps.usage.get(id);
  if (usage === undefined) sendJson(res, 404, { error: `Agent ${id} not found.` });
  else sendJson(res, 200, { agentId: id, ...usage });
  return true;
}
