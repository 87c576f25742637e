/**
 * Budget periods (UTC calendar periods; weeks start on Monday) and the period id spend is stored under:
 * `day:2026-11-26`, `week:2026-11-23` (the Monday), `month:2026-11`.
 */
import type { KeyBudget } from "../../surfaces/kit/principal.js";

/** One period: its id, its start and its end (= when the budget resets), epoch ms. */
export interface BudgetPeriod {
  kind: KeyBudget["period"];
  id: string;
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The period of each kind found last: most calls fall in it (every request asks for its key's period). */
const last: Partial<Record<KeyBudget["period"], Readonly<BudgetPeriod>>> = {};

/** The period of `kind` that `now` falls in. */
export function periodAt(kind: KeyBudget["period"], now: number): BudgetPeriod {
  const known = last[kind];
  if (known !== undefined && now >= known.start && now < known.end) return known;
  const period = Object.freeze(computePeriod(kind, now));
  last[kind] = period;
  return period;
}

function computePeriod(kind: KeyBudget["period"], now: number): BudgetPeriod {
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (kind === "day") return { kind, id: `day:${ymd(midnight)}`, start: midnight, end: midnight + DAY_MS };
  if (kind === "week") {
    const sinceMonday = (date.getUTCDay() + 6) % 7;
    const start = midnight - sinceMonday * DAY_MS;
    return { kind, id: `week:${ymd(start)}`, start, end: start + 7 * DAY_MS };
  }
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  return { kind, id: `month:${ymd(start).slice(0, 7)}`, start, end };
}
