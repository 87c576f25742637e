/**
 * `npx tsx bench/readme-table.ts [bench/results.json]`: prints the README's Performance table (one row per target:
 * what, measured with its spread, met or missed) and the line about the run, from a results file the bench wrote.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TargetResult } from "./report.js";

interface Results {
  mode: string;
  only: string;
  date: string;
  node: string;
  cpus: number;
  durationMs: number;
  cpuSeconds?: number;
  loadAverage: { before: number[]; after: number[] };
  targets: TargetResult[];
}

const path = process.argv[2] ?? fileURLToPath(new URL("./results.json", import.meta.url));
const r = JSON.parse(readFileSync(path, "utf8")) as Results;
const cell = (text: string) => text.replaceAll("|", "\\|");
const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(" / ");
const lines = [
  `${r.mode === "full" ? "Full" : "Quick"} run${r.only === "all" ? "" : ` (--only=${r.only})`} of ${r.date.slice(0, 10)}, ${(r.durationMs / 1000).toFixed(0)} s${r.cpuSeconds === undefined ? "" : ` (${r.cpuSeconds.toFixed(0)} CPU s)`}, ${r.cpus} CPUs, Node ${r.node}, load average (1/5/15 min) ${load(r.loadAverage.before)} before and ${load(r.loadAverage.after)} after.`,
  "",
  "| Target | Measured: median (lowest–highest) of the repetitions, worst; details | Result |",
  "|---|---|---|",
  ...r.targets.map(
    (t) => `| ${cell(`${t.scenario}: ${t.target}`)} | ${cell(t.measured)} | ${t.met ? "met" : "**MISSED**"} |`,
  ),
];
process.stdout.write(`${lines.join("\n")}\n`);
