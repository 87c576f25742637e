/** Percentiles, target bookkeeping and the printed table of the benchmark. */

/** The p-th percentile (0–100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** One target and whether the measurement met it. */
export interface TargetResult {
  scenario: string;
  target: string;
  measured: string;
  met: boolean;
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

/** Renders tables (column-aligned) and the targets list as plain text. */
export function renderReport(tables: readonly Table[], targets: readonly TargetResult[]): string {
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
  out.push("", "## Targets");
  for (const t of targets)
    out.push(`${t.met ? "MET   " : "MISSED"}  ${t.scenario}: ${t.target} — measured ${t.measured}`);
  return `${out.join("\n")}\n`;
}
