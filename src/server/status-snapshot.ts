/** The status page's data: what `GET /status.json` answers and `GET /` embeds. */
import type { AppOptions, PlanUsage } from "../surfaces/kit/deps.js";
import type { KeyUsage } from "../surfaces/kit/key-usage.js";
import type { RequestRecord } from "../surfaces/kit/recent-requests.js";

/** A plan usage as the page shows it, or why there is none. */
export type UsageSnapshot = ({ available: true } & PlanUsage) | { available: false; reason: string };

/** The JSON the page renders. */
export interface StatusSnapshot {
  version: string;
  now: number;
  upstream: { kind: AppOptions["upstream"]; url: string | null; loggedIn: boolean; account: string | null };
  usage: UsageSnapshot;
  /** Every Cursor account served (named accounts, issue #29) with its plan usage; empty when none are listed. */
  accounts: Array<{ name: string; default: boolean; who: string | null; usage: UsageSnapshot }>;
  models: Array<{ id: string; name: string; reasoning: boolean; vision: boolean; maxMode: boolean }>;
  modelsError: string | null;
  parked: Array<{ model: string; ageMs: number; pendingToolCalls: number }>;
  requests: RequestRecord[];
  /** Virtual keys' usage this period (team gateway): present only when keys are in use and the admin asks. */
  keys?: KeyUsage[];
  /** Why the key table could not be read (the store is unreachable), when it could not. */
  keysError?: string;
}
