/** Percentiles, medians with their spread, load averages, target bookkeeping and the printed table of the benchmark. */
import { loadavg } from "node:os";

/** The p-th percentile (0–100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** The median of repeated measurements with the lowest and highest of them. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Every repetition's value, in the order measured. */
  values: number[];
}

/** Median (mean of the middle two for an even count), min and max of `values`. */
export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length === 0
      ? Number.NaN
      : sorted.length % 2 === 1
        ? (sorted[mid] as number)
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN, values: [...values] };
}

/** `median (min–max)`. */
export function fmtSpread(s: Spread, digits = 1): string {
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

/** The machine's 1/5/15-minute load averages before and after a scenario. */
export interface LoadAverage {
  before: number[];
  after: number[];
}

/** Runs `scenario` and records the load average around it. */
export async function withLoadAverage<T>(scenario: () => Promise<T>): Promise<{ result: T; loadAverage: LoadAverage }> {
  const before = loadavg();
  const result = await scenario();
  return { result, loadAverage: { before, after: loadavg() } };
}

/** `1.23 1.10 0.98`. */
export function fmtLoad(load: readonly number[]): string {
  return load.map((l) => l.toFixed(2)).join(" ");
}

/** One target and whether the measurement met it. */
export interface TargetResult {
  scenario: string;
  target: string;
  /**
   * The floor the target is held against, as measured in the same run (bench/targets.ts); absent for a target with a
   * fixed bound of its own (a count, a budget in MB).
   */
  floor?: string;
  measured: string;
  met: boolean;
}

/** A target a later round replaced or dropped, listed with the reason (bench/targets.ts RETIRED_TARGETS). */
export interface RetiredTarget {
  /** The line as the bench printed it (`scenario: target`, its start). */
  was: string;
  /** What holds that ground now. */
  now: string;
  reason: string;
}

/** A target's printed line: `scenario: target — floor: … — measured … — met` (a fixed bound says it has no floor). */
export function targetLine(t: TargetResult): string {
  return `${t.scenario}: ${t.target} — floor: ${t.floor ?? "none, a fixed bound"} — measured ${t.measured} — ${t.met ? "met" : "MISSED"}`;
}

/** A printed row: label + cells. */
export type Row = [string, ...string[]];

/** A titled table. */
export interface Table {
  title: string;
  header: Row;
  rows: Row[];
  notes: string[];
}

/** Rounds for display. */
export function fmt(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toFixed(digits);
}

/** Renders tables (column-aligned), the targets list and the retired targets as plain text. */
export function renderReport(
  tables: readonly Table[],
  targets: readonly TargetResult[],
  retired: readonly RetiredTarget[] = [],
): string {
  const out: string[] = [];
  for (const table of tables) {
    const all = [table.header, ...table.rows];
    const widths = table.header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
    const line = (row: Row) =>
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ");
    out.push("", `## ${table.title}`, line(table.header), widths.map((w) => "-".repeat(w)).join("  "));
    for (const row of table.rows) out.push(line(row));
    for (const note of table.notes) out.push(`  * ${note}`);
  }
  out.push("", "## Targets (met only when the worst repetition meets it; a floor not measured counts as MISSED)");
  for (const t of targets) out.push(targetLine(t));
  if (retired.length > 0) {
    out.push("", "## Retired targets (no longer checked)");
    for (const r of retired) out.push(`${r.was} — retired: ${r.reason}; now: ${r.now}`);
  }
  return `${out.join("\n")}\n`;
}

/**
 * A target on a spread of repetitions: met only when the WORST repetition meets it (the highest for `≤`, the lowest
 * for `≥`), so a target never passes on a lucky median. `detail` follows the spread (absolute values, sample sizes).
 */
export function spreadTarget(
  scenario: string,
  target: string,
  spread: Spread,
  bound: { atMost: number } | { atLeast: number },
  detail = "",
  digits = 2,
): TargetResult {
  const atMost = "atMost" in bound;
  const worst = atMost ? spread.max : spread.min;
  const met = Number.isFinite(worst) && (atMost ? worst <= bound.atMost : worst >= bound.atLeast);
  return {
    scenario,
    target,
    measured: `${fmtSpread(spread, digits)}, worst ${fmt(worst, digits)} over ${spread.values.length} rep${spread.values.length === 1 ? "" : "s"}${detail === "" ? "" : `; ${detail}`}`,
    met,
  };
}
