/** The status page's data: what `GET /status.json` answers and `GET /` embeds. */
import type { AppOptions, PlanUsage } from "../surfaces/kit/deps.js";
import type { KeyUsage } from "../surfaces/kit/key-usage.js";
import type { RequestRecord } from "../surfaces/kit/recent-requests.js";

/** The JSON the page renders. */
export interface StatusSnapshot {
  version: string;
  now: number;
  upstream: { kind: AppOptions["upstream"]; url: string | null; loggedIn: boolean; account: string | null };
  usage: ({ available: true } & PlanUsage) | { available: false; reason: string };
  models: Array<{ id: string; name: string; reasoning: boolean; vision: boolean; maxMode: boolean }>;
  modelsError: string | null;
  parked: Array<{ model: string; ageMs: number; pendingToolCalls: number }>;
  requests: RequestRecord[];
  /** Virtual keys' usage this period (team gateway): present only when keys are in use and the admin asks. */
  keys?: KeyUsage[];
  /** Why the key table could not be read (the store is unreachable), when it could not. */
  keysError?: string;
}
